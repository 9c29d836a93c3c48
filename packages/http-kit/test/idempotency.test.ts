import { createHash } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { runMigrations } from '../../db/src/index.js';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { canonicalJson } from '../src/etag.js';
import { IDEMPOTENCY_LEASE_MS } from '../src/idempotency.js';
import { AnswerSealer, ApiRouter, createLogger, idempotency, idempotencyMigrations, ManualClock, PgIdempotencyStore } from '../src/index.js';
import { app } from './helpers.js';

describe('Idempotency-Key (PostgreSQL store)', () => {
  let db: TestDatabase;
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  let runs = 0;
  let failNext = false;
  let server: ReturnType<typeof app>;
  let store: PgIdempotencyStore;

  before(async () => {
    db = await createTestDatabase();
    await runMigrations(db.knex, [idempotencyMigrations]);
    store = new PgIdempotencyStore(db.knex, new AnswerSealer('test secret'));
    const api = new ApiRouter();
    api.route(
      {
        method: 'post',
        path: '/api/v1/things',
        operationId: 'makeThing',
        auth: true,
        summary: 'make',
        body: { type: 'object', properties: { n: { type: 'integer' } } },
        responses: { 201: { description: 'made' } },
      },
      (req, res) => {
        runs++;
        if (failNext) {
          failNext = false;
          throw new Error('boom');
        }
        if ((req.body as { n?: number }).n === 4) {
          res.status(409).json({ refused: true });
          return;
        }
        res.status(201).location(`/api/v1/things/${runs}`).json({ run: runs });
      },
    );
    server = app([api], { idempotency: idempotency({ store, clock, logger: createLogger({ level: 'silent' }) }) });
  });
  after(async () => db?.destroy());

  const post = (user: string, key: string | undefined, body: object) => {
    const r = request(server).post('/api/v1/things').set('X-Test-User', user);
    return (key === undefined ? r : r.set('Idempotency-Key', key)).send(body);
  };

  it('runs once and replays status, body and Location; another person’s same key is theirs', async () => {
    const first = await post('u1', 'a', { n: 1 });
    const again = await post('u1', 'a', { n: 1 });
    expect([first.status, again.status]).to.deep.equal([201, 201]);
    expect(again.text).to.equal(first.text);
    expect(again.headers.location).to.equal(first.headers.location);
    const other = await post('u2', 'a', { n: 1 });
    expect(other.text).to.not.equal(first.text);
  });

  it('keeps a 4xx answer, but not a 500: the retry of a 500 runs again', async () => {
    const refused = await post('u1', 'refused', { n: 4 });
    const before = runs;
    expect((await post('u1', 'refused', { n: 4 })).status).to.equal(409);
    expect(runs).to.equal(before);
    failNext = true;
    expect((await post('u1', 'failed', { n: 5 })).status).to.equal(500);
    const retried = await post('u1', 'failed', { n: 5 });
    expect(retried.status).to.equal(201);
    expect(runs).to.equal(before + 2);
    expect(refused.body).to.deep.equal({ refused: true });
  });

  it('forgets a key after 24 h (then it runs again) and frees one whose request never finished after the lease', async () => {
    const first = await post('u3', 'day', { n: 1 });
    clock.advance(24 * 3600 * 1000);
    const later = await post('u3', 'day', { n: 2 });
    expect(later.status).to.equal(201);
    expect(later.text).to.not.equal(first.text);
    expect(await store.purge(new Date(clock.now().getTime() + 24 * 3600 * 1000))).to.be.greaterThan(0);
    // A claim whose instance died: in flight (409) until its lease ends.
    const fingerprint = createHash('sha256')
      .update(canonicalJson({ n: 1 }))
      .digest('base64url');
    expect(
      await store.claim({ userId: 'u3', key: 'dead', method: 'POST', path: '/api/v1/things', fingerprint, role: '', scopes: null, now: clock.now() }),
    ).to.equal(true);
    const busy = await post('u3', 'dead', { n: 1 });
    expect([busy.status, busy.body.code]).to.deep.equal([409, 'idempotency_key_in_flight']);
    clock.advance(IDEMPOTENCY_LEASE_MS);
    expect((await post('u3', 'dead', { n: 1 })).status).to.equal(201);
  });

  it('ignores the header without a caller (the route answers 401) and refuses an empty or over-long key', async () => {
    expect((await request(server).post('/api/v1/things').set('Idempotency-Key', '').send({})).status).to.equal(401);
    for (const key of ['', 'k'.repeat(256)]) expect((await post('u4', key, {})).body.code).to.equal('validation_failed');
    expect((await post('u4', 'k'.repeat(255), {})).status).to.equal(201);
  });
});
