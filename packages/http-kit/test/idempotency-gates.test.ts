import { expect } from 'chai';
import request from 'supertest';
import { runMigrations } from '../../db/src/index.js';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import {
  AnswerSealer,
  ApiRouter,
  createHttpApp,
  createLogger,
  idempotency,
  idempotencyMigrations,
  ManualClock,
  NotFoundError,
  PgIdempotencyStore,
} from '../src/index.js';

/**
 * Issue 47 findings 2 and 3: a replay only after the route's own gates, keys per credential and
 * household role, refusals never kept, answers sealed in the table; issue 42: replays are marked.
 */
describe('Idempotency-Key behind every gate', () => {
  let db: TestDatabase;
  const clock = new ManualClock('2026-12-02T09:00:00.000Z');
  let runs = 0;
  /** userId → householdId → role; absent: not a member (404). */
  const roles = new Map<string, Map<string, string>>();

  const build = (sealer: AnswerSealer, store: PgIdempotencyStore = new PgIdempotencyStore(db.knex, sealer)) => {
    const api = new ApiRouter();
    api.route(
      {
        method: 'post',
        path: '/api/v1/me/tokens',
        operationId: 'mint',
        auth: true,
        summary: 'a secret shown once',
        body: { type: 'object', properties: { name: { type: 'string' } } },
        responses: { 201: { description: 'made' } },
      },
      (_req, res) => {
        runs++;
        res
          .status(201)
          .location(`/api/v1/me/tokens/${runs}`)
          .json({ token: `mp_pat_secret${runs}` });
      },
    );
    api.route(
      {
        method: 'post',
        path: '/api/v1/households/{householdId}/invitations',
        operationId: 'invite',
        auth: true,
        tokenScope: 'events:write',
        summary: 'an Adult-only write',
        params: { type: 'object', properties: { householdId: { type: 'string' } } },
        body: { type: 'object' },
        responses: { 201: { description: 'made' } },
      },
      async (req, res) => {
        runs++;
        const role = roles.get(req.principal!.userId)?.get(req.params.householdId as string);
        if (!role) throw new NotFoundError('not_found', 'No such household');
        if (role === 'Junior') {
          res.status(403).json({ code: 'forbidden' });
          return;
        }
        res.status(201).json({ code: `invite-${runs}` });
      },
    );
    return createHttpApp({
      logger: createLogger({ level: 'silent' }),
      allowedOrigins: ['http://localhost:8080'],
      authenticate: [
        (req, _res, next) => {
          const user = req.get('x-test-user');
          const token = req.get('x-test-token');
          if (user) req.principal = token ? { userId: user, tokenId: token, scopes: (req.get('x-test-scopes') ?? '').split(',') } : { userId: user };
          next();
        },
      ],
      routers: [api],
      idempotency: idempotency({
        store,
        clock,
        logger: createLogger({ level: 'silent' }),
        roleOf: async ({ userId }, householdId) => {
          const role = roles.get(userId)?.get(householdId);
          if (!role) throw new NotFoundError('not_found', 'No such household');
          return role;
        },
      }),
    });
  };
  let one: ReturnType<typeof build>;
  let two: ReturnType<typeof build>;

  before(async () => {
    db = await createTestDatabase();
    await runMigrations(db.knex, [idempotencyMigrations]);
    // Two instances on one database, with the same sealing secret.
    one = build(new AnswerSealer('secret A'));
    two = build(new AnswerSealer('secret A'));
  });
  after(async () => db?.destroy());

  it('a narrower token never gets the session’s kept answer: the route’s scope gate refuses it first; a token the gate lets through gets the person’s answer, never a second run', async () => {
    const first = await request(one).post('/api/v1/me/tokens').set('X-Test-User', 'u1').set('Idempotency-Key', 'K').send({ name: 'full' });
    expect(first.status).to.equal(201);
    const again = await request(two).post('/api/v1/me/tokens').set('X-Test-User', 'u1').set('Idempotency-Key', 'K').send({ name: 'full' });
    expect([again.status, again.text, again.headers['idempotent-replayed']]).to.deep.equal([201, first.text, 'true']);
    expect(first.headers['idempotent-replayed']).to.equal(undefined);
    // The same person's events:read token, the same key and body: 403, not the session's secret.
    const token = await request(two)
      .post('/api/v1/me/tokens')
      .set('X-Test-User', 'u1')
      .set('X-Test-Token', 't1')
      .set('X-Test-Scopes', 'events:read')
      .set('Idempotency-Key', 'K')
      .send({ name: 'full' });
    expect([token.status, token.body.code]).to.deep.equal([403, 'insufficient_scope']);
    expect(token.text).to.not.include('mp_pat_');
    // A session's write that this token may also make (it passes the route's gate itself): the person's answer, not a second run.
    roles.set('u7', new Map([['h7', 'Adult']]));
    const bySession = await request(one).post('/api/v1/households/h7/invitations').set('X-Test-User', 'u7').set('Idempotency-Key', 'K7').send({});
    expect(bySession.status).to.equal(201);
    const before = runs;
    const byToken = await request(two)
      .post('/api/v1/households/h7/invitations')
      .set('X-Test-User', 'u7')
      .set('X-Test-Token', 't7')
      .set('X-Test-Scopes', 'events:write')
      .set('Idempotency-Key', 'K7')
      .send({});
    expect([byToken.status, byToken.text, byToken.headers['idempotent-replayed'], runs]).to.deep.equal([201, bySession.text, 'true', before]);
    // The other way round: what a token was answered is replayed to the person's session, and to a token reaching as far.
    const tokenFirst = await request(one)
      .post('/api/v1/households/h7/invitations')
      .set('X-Test-User', 'u7')
      .set('X-Test-Token', 't8')
      .set('X-Test-Scopes', 'events:write')
      .set('Idempotency-Key', 'K8')
      .send({});
    expect(tokenFirst.status).to.equal(201);
    const sessionRetry = await request(two).post('/api/v1/households/h7/invitations').set('X-Test-User', 'u7').set('Idempotency-Key', 'K8').send({});
    expect([sessionRetry.status, sessionRetry.text, sessionRetry.headers['idempotent-replayed']]).to.deep.equal([201, tokenFirst.text, 'true']);
    const widerToken = await request(two)
      .post('/api/v1/households/h7/invitations')
      .set('X-Test-User', 'u7')
      .set('X-Test-Token', 't9')
      .set('X-Test-Scopes', 'rules:read,events:write')
      .set('Idempotency-Key', 'K8')
      .send({});
    expect([widerToken.status, widerToken.text]).to.deep.equal([201, tokenFirst.text]);
  });

  it('keeps the header names’ case on a replay', async () => {
    const first = await request(one).post('/api/v1/me/tokens').set('X-Test-User', 'u9').set('Idempotency-Key', 'case').send({});
    const again = await request(two).post('/api/v1/me/tokens').set('X-Test-User', 'u9').set('Idempotency-Key', 'case').send({});
    expect(again.headers.location).to.equal(first.headers.location);
    const raw = (again as unknown as { res: { rawHeaders: string[] } }).res.rawHeaders.filter((_, i) => i % 2 === 0);
    expect(raw).to.include('Location');
    expect(raw).to.include('Idempotent-Replayed');
  });

  it('a refusal is never kept: a token’s 403 under K is not served to the person’s session, which then runs', async () => {
    roles.set('u2', new Map([['h1', 'Adult']]));
    const refused = await request(one)
      .post('/api/v1/households/h1/invitations')
      .set('X-Test-User', 'u2')
      .set('X-Test-Token', 't2')
      .set('X-Test-Scopes', 'rules:read')
      .set('Idempotency-Key', 'K2')
      .send({});
    expect(refused.status).to.equal(403);
    const session = await request(two).post('/api/v1/households/h1/invitations').set('X-Test-User', 'u2').set('Idempotency-Key', 'K2').send({});
    expect(session.status).to.equal(201);
    expect(session.headers['idempotent-replayed']).to.equal(undefined);
    // A role refusal (403 from the handler) is not kept either: after a promotion the retry runs.
    roles.set('u3', new Map([['h1', 'Junior']]));
    expect((await request(one).post('/api/v1/households/h1/invitations').set('X-Test-User', 'u3').set('Idempotency-Key', 'K3').send({})).status).to.equal(403);
    roles.get('u3')!.set('h1', 'Adult');
    const promoted = await request(two).post('/api/v1/households/h1/invitations').set('X-Test-User', 'u3').set('Idempotency-Key', 'K3').send({});
    expect([promoted.status, promoted.headers['idempotent-replayed']]).to.deep.equal([201, undefined]);
  });

  it('a retry on another instance while a refused request is still letting the key go waits for it and runs (no 422 for the role that was refused)', async () => {
    const sealer = new AnswerSealer('secret A');
    // The refused request's instance lets the key go only once the retry's instance looks again.
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    let released: Promise<void> | undefined;
    const holding = new (class extends PgIdempotencyStore {
      override release(owner: Parameters<PgIdempotencyStore['release']>[0]): Promise<void> {
        released = opened.then(() => super.release(owner));
        return released;
      }
    })(db.knex, sealer);
    const watching = new (class extends PgIdempotencyStore {
      override async read(owner: Parameters<PgIdempotencyStore['read']>[0]) {
        open();
        await released;
        return super.read(owner);
      }
    })(db.knex, sealer);
    const refusing = build(sealer, holding);
    const retrying = build(sealer, watching);
    roles.set('u8', new Map([['h8', 'Junior']]));
    expect((await request(refusing).post('/api/v1/households/h8/invitations').set('X-Test-User', 'u8').set('Idempotency-Key', 'K8').send({})).status).to.equal(
      403,
    );
    expect(released, 'the refusal lets the key go after its answer').to.not.equal(undefined);
    roles.get('u8')!.set('h8', 'Adult');
    const promoted = await request(retrying).post('/api/v1/households/h8/invitations').set('X-Test-User', 'u8').set('Idempotency-Key', 'K8').send({});
    expect([promoted.status, promoted.headers['idempotent-replayed']]).to.deep.equal([201, undefined]);
  });

  it('a member removed since gets the route’s 404, not their kept 201; one whose role changed 422', async () => {
    roles.set('u4', new Map([['h2', 'Adult']]));
    const first = await request(one).post('/api/v1/households/h2/invitations').set('X-Test-User', 'u4').set('Idempotency-Key', 'K4').send({});
    expect(first.status).to.equal(201);
    roles.get('u4')!.delete('h2');
    const removed = await request(two).post('/api/v1/households/h2/invitations').set('X-Test-User', 'u4').set('Idempotency-Key', 'K4').send({});
    expect([removed.status, removed.body.code]).to.deep.equal([404, 'not_found']);
    expect(removed.text).to.not.include('invite-');
    roles.get('u4')!.set('h2', 'Junior');
    const demoted = await request(two).post('/api/v1/households/h2/invitations').set('X-Test-User', 'u4').set('Idempotency-Key', 'K4').send({});
    expect([demoted.status, demoted.body.code]).to.deep.equal([422, 'idempotency_key_reused']);
    roles.get('u4')!.set('h2', 'Adult');
    const back = await request(one).post('/api/v1/households/h2/invitations').set('X-Test-User', 'u4').set('Idempotency-Key', 'K4').send({});
    expect([back.status, back.text]).to.deep.equal([201, first.text]);
  });

  it('keeps no answer in the clear: the table holds sealed bytes only, and another secret cannot open them (422, never a second run)', async () => {
    const first = await request(one).post('/api/v1/me/tokens').set('X-Test-User', 'u5').set('Idempotency-Key', 'K5').send({});
    const secret = first.body.token as string;
    // The answer is kept just after it was sent: wait for that write (a signal, not a fixed sleep).
    let rows: { body: Buffer; status: number | null }[] = [];
    for (let i = 0; i < 200 && rows[0]?.status == null; i++) {
      rows = await db.knex('idempotency_keys').select('body', 'status').where({ user_id: 'u5' });
      if (rows[0]?.status == null) await new Promise((r) => setImmediate(r));
    }
    expect(rows).to.have.length(1);
    const kept = Buffer.from(rows[0]!.body).toString('latin1');
    expect(rows[0]!.status).to.equal(201);
    expect(kept).to.not.include(secret);
    expect(kept).to.not.include('Location');
    // Another secret (SESSION_SECRET rotated), and no previous key given: the kept answer cannot be sent, nor the operation run again.
    const rotated = build(new AnswerSealer('secret B'));
    const before = runs;
    const after = await request(rotated).post('/api/v1/me/tokens').set('X-Test-User', 'u5').set('Idempotency-Key', 'K5').send({});
    expect([after.status, after.body.code, runs]).to.deep.equal([422, 'idempotency_key_reused', before]);
    // With the old secret as a previous key it still answers.
    const withPrevious = build(new AnswerSealer('secret B', ['secret A']));
    expect((await request(withPrevious).post('/api/v1/me/tokens').set('X-Test-User', 'u5').set('Idempotency-Key', 'K5').send({})).text).to.equal(first.text);
  });
});
