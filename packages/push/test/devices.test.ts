import { createHash, randomUUID } from 'node:crypto';
import { compileValue, type Pojo, type ReadDeclaration } from '@svc/db';
import { ManualClock, newRequestContext, runWithContext } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import { buildTestApp, createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createRouter, deviceRead, devicesRead, migrations, ObjectionPushStore, type PushKind, PushService } from '../src/index.js';
import { DEVICES_PER_PERSON } from '../src/service.js';

describe('push devices: /api/v1/me/devices', () => {
  let db: TestDatabase;
  let app: Express;
  let devicesFor: (userId: string, kind: PushKind) => Promise<{ token: string }[]>;
  let service: PushService;
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const ada = randomUUID();
  const bo = randomUUID();
  // FCM-style: base64url characters and a colon.
  const fcm = 'dGhpcyBpcyBub3QgYSByZWFs:APA91bH-x_9zQ0Kk3yLw';
  // Standard base64 characters that must be percent-encoded in a path: '/', '+', '='.
  const b64 = 'ab/cd+ef==';

  before(async () => {
    db = await createTestDatabase([jobs.migrations, migrations]);
    service = new PushService({ store: new ObjectionPushStore(db.knex), clock, config: { defaultProvider: 'fcm' } });
    devicesFor = (userId, kind) => service.devicesFor(userId, kind);
    app = buildTestApp({ routers: [createRouter({ service })] });
  });
  beforeEach(() => clock.set('2026-11-22T09:00:00.000Z'));
  afterEach(() => db.truncate());
  after(() => db.destroy());

  const put = (b: Record<string, unknown>, user = ada) => request(app).put('/api/v1/me/devices').set('X-Test-User', user).send(b);
  const at = (token: string) => `/api/v1/me/devices/${encodeURIComponent(token)}`;
  const get = (token: string, user = ada) => request(app).get(at(token)).set('X-Test-User', user);
  const patch = (token: string, b: Record<string, unknown>, user = ada) => request(app).patch(at(token)).set('X-Test-User', user).send(b);
  const del = (token: string, user = ada) => request(app).delete(at(token)).set('X-Test-User', user);
  const rows = () =>
    db
      .knex('pushDevices')
      .count<{ count: string }[]>('* as count')
      .then((r) => Number(r[0]!.count));

  describe('PUT', () => {
    it('a person keeps at most DEVICES_PER_PERSON devices: 12 parallel new ones at a bound of 4 register 4, the rest 409 limit_reached; a known one is always accepted', async () => {
      expect(DEVICES_PER_PERSON).to.equal(100);
      const bounded = buildTestApp({
        routers: [
          createRouter({ service: new PushService({ store: new ObjectionPushStore(db.knex), clock, config: { defaultProvider: 'fcm' }, maxDevices: 4 }) }),
        ],
      });
      const reg = (token: string, user = ada) => request(bounded).put('/api/v1/me/devices').set('X-Test-User', user).send({ token, platform: 'ios' });
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => reg(`phone-${i}`)));
      const ok = answers.filter((r) => r.status === 200);
      expect(ok).to.have.length(4);
      const refused = answers.filter((r) => r.status === 409);
      expect(refused).to.have.length(8);
      expect(refused[0]!.body.code).to.equal('limit_reached');
      expect(await rows()).to.equal(4);
      // A known token of the person's is seen again; another person is not affected.
      expect((await reg(ok[0]!.body.token)).status).to.equal(200);
      expect((await reg('phone-of-bo', bo)).status).to.equal(200);
      // Bo's phone handed to Ada (a new login on it) is one more of Ada's: refused, and it stays Bo's.
      expect((await reg('phone-of-bo', ada)).status).to.equal(409);
      expect((await db.knex('pushDevices').where({ token: 'phone-of-bo' }).first()).userId).to.equal(bo);
    });

    it('holds DEVICES_PER_PERSON whoever writes: a direct INSERT past it fails with PUBND and writes nothing', async () => {
      const row = (i: number) => ({
        tokenHash: createHash('sha256').update(`direct-${i}`).digest(),
        token: `direct-${i}`,
        userId: ada,
        platform: 'ios',
        provider: 'fcm',
        listChanges: true,
        householdNews: true,
        runDone: true,
        reminders: true,
        lastSeenAt: new Date(),
        createdAt: new Date(),
        updatedAt: new Date(),
      });
      await db.knex('pushDevices').insert(Array.from({ length: DEVICES_PER_PERSON }, (_, i) => row(i)));
      const err = await db
        .knex('pushDevices')
        .insert(row(-1))
        .then(
          () => undefined,
          (e: { code?: string }) => e,
        );
      expect(err).to.include({ code: 'PUBND' });
      expect(await rows()).to.equal(DEVICES_PER_PERSON);
      // Through the service: 409, and a known token of the person's is still accepted.
      expect((await put({ token: 'one-more', platform: 'ios' })).status).to.equal(409);
      expect((await put({ token: 'direct-0', platform: 'android' })).status).to.equal(200);
    });

    it('registers a new phone with all four switches on, the default provider and lastSeenAt now', async () => {
      const res = await put({ token: fcm, platform: 'android' }).expect(200);
      expect(res.body).to.deep.equal({
        token: fcm,
        platform: 'android',
        provider: 'fcm',
        listChanges: true,
        householdNews: true,
        runDone: true,
        reminders: true,
        lastSeenAt: '2026-11-22T09:00:00.000Z',
        quietHours: null,
      });
      expect(Object.keys(res.body)).to.deep.equal([
        'token',
        'platform',
        'provider',
        'listChanges',
        'householdNews',
        'runDone',
        'reminders',
        'lastSeenAt',
        'quietHours',
      ]);
    });

    it('stores the default provider for provider null, and a named provider as sent', async () => {
      expect((await put({ token: 'a', platform: 'ios', provider: null }).expect(200)).body.provider).to.equal('fcm');
      expect((await put({ token: 'b', platform: 'ios', provider: 'apns' }).expect(200)).body.provider).to.equal('apns');
    });

    it('is idempotent per token: one row, marked seen again, switches kept', async () => {
      await put({ token: fcm, platform: 'android' }).expect(200);
      await patch(fcm, { listChanges: false, householdNews: true, runDone: false, reminders: false }).expect(200);
      clock.advanceSeconds(3600);
      const again = await put({ token: fcm, platform: 'android' }).expect(200);
      expect(again.body).to.include({ listChanges: false, householdNews: true, runDone: false, reminders: false, lastSeenAt: '2026-11-22T10:00:00.000Z' });
      expect(await rows()).to.equal(1);
    });

    it('takes platform and provider from the latest PUT of the caller', async () => {
      await put({ token: fcm, platform: 'android', provider: 'apns' }).expect(200);
      const res = await put({ token: fcm, platform: 'ios' }).expect(200);
      expect(res.body).to.include({ platform: 'ios', provider: 'fcm' });
    });

    it('hands a known token to the new account: the first one loses it, switches start all on again', async () => {
      await put({ token: fcm, platform: 'android' }, ada).expect(200);
      await patch(fcm, { listChanges: false, householdNews: false, runDone: false, reminders: false }, ada).expect(200);
      clock.advanceSeconds(60);
      const res = await put({ token: fcm, platform: 'android' }, bo).expect(200);
      expect(res.body).to.include({ listChanges: true, householdNews: true, runDone: true, reminders: true, lastSeenAt: '2026-11-22T09:01:00.000Z' });
      expect(await rows()).to.equal(1);
      expect((await get(fcm, ada).expect(404)).body.code).to.equal('not_found');
      await patch(fcm, { listChanges: true, householdNews: true, runDone: true }, ada).expect(404);
      await del(fcm, ada).expect(404);
      expect((await get(fcm, bo).expect(200)).body.token).to.equal(fcm);
      expect(await devicesFor(ada, 'listChanges')).to.deep.equal([]);
      expect((await devicesFor(bo, 'listChanges')).map((d) => d.token)).to.deep.equal([fcm]);
    });

    it('keeps one row when the same token is PUT twice in parallel', async () => {
      const results = await Promise.all([put({ token: fcm, platform: 'android' }), put({ token: fcm, platform: 'android' })]);
      for (const r of results) expect(r.status).to.equal(200);
      expect(await rows()).to.equal(1);
    });

    it('keeps one row, owned by one of them, when two accounts PUT the same token in parallel', async () => {
      const results = await Promise.all([put({ token: fcm, platform: 'android' }, ada), put({ token: fcm, platform: 'ios' }, bo)]);
      for (const r of results) expect(r.status).to.equal(200);
      expect(await rows()).to.equal(1);
      const owners = await Promise.all([get(fcm, ada), get(fcm, bo)]);
      expect(owners.map((r) => r.status).sort()).to.deep.equal([200, 404]);
    });

    it('accepts a 4096-character token and refuses 4097 with 400 value_too_long', async () => {
      const long = 'x'.repeat(4095);
      for (const token of [`${long}a`, `${long}b`]) await put({ token, platform: 'ios' }).expect(200);
      expect(await rows()).to.equal(2);
      expect((await get(`${long}a`).expect(200)).body.token).to.equal(`${long}a`);
      const res = await put({ token: 'x'.repeat(4097), platform: 'ios' }).expect(400);
      expect(res.body.code).to.equal('value_too_long');
    });

    const bad: [string, Record<string, unknown>][] = [
      ['an empty token', { token: '', platform: 'ios' }],
      ['no token', { platform: 'ios' }],
      ['a null token', { token: null, platform: 'ios' }],
      ['a numeric token', { token: 42, platform: 'ios' }],
      ['no platform', { token: 't' }],
      ['platform web', { token: 't', platform: 'web' }],
      ['platform IOS', { token: 't', platform: 'IOS' }],
      ['platform null', { token: 't', platform: null }],
      ['an empty provider', { token: 't', platform: 'ios', provider: '' }],
      ['a numeric provider', { token: 't', platform: 'ios', provider: 1 }],
    ];
    for (const [name, b] of bad) {
      it(`answers 400 validation_failed for ${name}, and stores nothing`, async () => {
        expect((await put(b).expect(400)).body.code).to.equal('validation_failed');
        expect(await rows()).to.equal(0);
      });
    }
    it('answers 400 value_too_long for a provider over 200 characters', async () => {
      expect((await put({ token: 't', platform: 'ios', provider: 'p'.repeat(201) }).expect(400)).body.code).to.equal('value_too_long');
    });
  });

  describe('tokens in the path', () => {
    it('finds a token with a colon sent as-is, and percent-encoded', async () => {
      await put({ token: fcm, platform: 'android' }).expect(200);
      expect((await request(app).get(`/api/v1/me/devices/${fcm}`).set('X-Test-User', ada).expect(200)).body.token).to.equal(fcm);
      expect(
        (
          await request(app)
            .get(`/api/v1/me/devices/${fcm.replace(':', '%3A')}`)
            .set('X-Test-User', ada)
            .expect(200)
        ).body.token,
      ).to.equal(fcm);
    });

    it("finds a token with '/', '+' and '=' percent-encoded; '+' in the path is a plus, not a space", async () => {
      await put({ token: b64, platform: 'ios' }).expect(200);
      expect((await get(b64).expect(200)).body.token).to.equal(b64);
      expect((await request(app).get('/api/v1/me/devices/ab%2Fcd+ef%3D%3D').set('X-Test-User', ada).expect(200)).body.token).to.equal(b64);
      await request(app).get('/api/v1/me/devices/ab%2Fcd%20ef%3D%3D').set('X-Test-User', ada).expect(404);
    });

    it('decodes once: a double-encoded token is another token', async () => {
      await put({ token: b64, platform: 'ios' }).expect(200);
      await request(app)
        .get(`/api/v1/me/devices/${encodeURIComponent(encodeURIComponent(b64))}`)
        .set('X-Test-User', ada)
        .expect(404);
    });

    it('compares tokens exactly, case included', async () => {
      await put({ token: 'AbC', platform: 'ios' }).expect(200);
      await get('abc').expect(404);
    });

    it('answers 400 for a malformed percent-encoding', async () => {
      const res = await request(app).get('/api/v1/me/devices/abc%E0%A4%A').set('X-Test-User', ada).expect(400);
      expect(res.body.code).to.equal('validation_failed');
    });

    it('answers 400 value_too_long for a path token over 4096 characters', async () => {
      expect((await get('y'.repeat(4097)).expect(400)).body.code).to.equal('value_too_long');
    });
  });

  describe('GET', () => {
    it("answers the caller's device, and 404 not_found for a token never registered", async () => {
      await put({ token: fcm, platform: 'android' }).expect(200);
      expect((await get(fcm).expect(200)).body).to.include({ token: fcm, platform: 'android' });
      expect((await get('unknown').expect(404)).body.code).to.equal('not_found');
    });
    it("answers 404 not_found for another account's token", async () => {
      await put({ token: fcm, platform: 'android' }, bo).expect(200);
      expect((await get(fcm, ada).expect(404)).body.code).to.equal('not_found');
    });
  });

  describe('PATCH', () => {
    beforeEach(() => put({ token: fcm, platform: 'android' }).expect(200));

    it('sets all four switches, leaving lastSeenAt alone', async () => {
      clock.advanceSeconds(60);
      const res = await patch(fcm, { listChanges: false, householdNews: true, runDone: false, reminders: false }).expect(200);
      expect(res.body).to.deep.equal({
        token: fcm,
        platform: 'android',
        provider: 'fcm',
        listChanges: false,
        householdNews: true,
        runDone: false,
        reminders: false,
        lastSeenAt: '2026-11-22T09:00:00.000Z',
        quietHours: null,
      });
      expect((await get(fcm).expect(200)).body).to.deep.equal(res.body);
    });

    it('takes quietHours (HH:mm, HH:mm:ss accepted), keeps them when left out, clears them with null', async () => {
      const switches = { listChanges: true, householdNews: true, runDone: true };
      const set = await patch(fcm, { ...switches, quietHours: { start: '22:00:00', end: '07:00' } }).expect(200);
      expect(set.body.quietHours).to.deep.equal({ start: '22:00', end: '07:00' });
      expect((await get(fcm).expect(200)).body.quietHours).to.deep.equal({ start: '22:00', end: '07:00' });
      expect((await patch(fcm, switches).expect(200)).body.quietHours).to.deep.equal({ start: '22:00', end: '07:00' });
      expect((await patch(fcm, { ...switches, quietHours: null }).expect(200)).body.quietHours).to.equal(null);
    });

    it('answers 400 validation_failed for quietHours whose start equals its end, or that are not HH:mm', async () => {
      const switches = { listChanges: true, householdNews: true, runDone: true };
      for (const quietHours of [
        { start: '07:00', end: '07:00' },
        { start: '7:00', end: '08:00' },
        { start: '24:00', end: '08:00' },
        { start: '07:00' },
        'night',
      ]) {
        const res = await patch(fcm, { ...switches, quietHours }).expect(400);
        expect(res.body.code, JSON.stringify(quietHours)).to.equal('validation_failed');
      }
      expect((await get(fcm).expect(200)).body.quietHours).to.equal(null);
    });

    it('keeps reminders when it is left out, and when it is null', async () => {
      await patch(fcm, { listChanges: true, householdNews: true, runDone: true, reminders: false }).expect(200);
      expect((await patch(fcm, { listChanges: false, householdNews: false, runDone: false }).expect(200)).body).to.include({
        listChanges: false,
        reminders: false,
      });
      expect((await patch(fcm, { listChanges: true, householdNews: false, runDone: false, reminders: null }).expect(200)).body).to.include({
        listChanges: true,
        reminders: false,
      });
      await patch(fcm, { listChanges: true, householdNews: true, runDone: true, reminders: true }).expect(200);
      expect((await patch(fcm, { listChanges: true, householdNews: true, runDone: true }).expect(200)).body.reminders).to.equal(true);
    });

    for (const field of ['listChanges', 'householdNews', 'runDone']) {
      it(`answers 400 validation_failed when ${field} is left out, null or not a boolean`, async () => {
        for (const value of [undefined, null, 'true', 1]) {
          const b: Record<string, unknown> = { listChanges: true, householdNews: true, runDone: true, reminders: true, [field]: value };
          if (value === undefined) delete b[field];
          const res = await patch(fcm, b).expect(400);
          expect(res.body.code).to.equal('validation_failed');
          expect(res.body.errors.map((e: { field: string }) => e.field)).to.include(field);
        }
        expect((await get(fcm).expect(200)).body.listChanges).to.equal(true);
      });
    }
    it('answers 400 validation_failed for reminders that is not a boolean', async () => {
      expect((await patch(fcm, { listChanges: true, householdNews: true, runDone: true, reminders: 'no' }).expect(400)).body.code).to.equal(
        'validation_failed',
      );
    });
    it("answers 404 not_found for a token that is not the caller's", async () => {
      expect((await patch(fcm, { listChanges: false, householdNews: false, runDone: false }, bo).expect(404)).body.code).to.equal('not_found');
      expect((await get(fcm).expect(200)).body.listChanges).to.equal(true);
      await patch('unknown', { listChanges: false, householdNews: false, runDone: false }).expect(404);
    });
  });

  describe('DELETE', () => {
    it('answers 204, forgets the phone, and a second delete answers 404', async () => {
      await put({ token: fcm, platform: 'android' }).expect(200);
      expect((await del(fcm).expect(204)).text).to.equal('');
      await get(fcm).expect(404);
      expect((await del(fcm).expect(404)).body.code).to.equal('not_found');
      expect(await rows()).to.equal(0);
    });
    it("answers 404 not_found for another account's token and leaves it", async () => {
      await put({ token: fcm, platform: 'android' }, bo).expect(200);
      expect((await del(fcm, ada).expect(404)).body.code).to.equal('not_found');
      await get(fcm, bo).expect(200);
    });
  });

  describe('devicesFor', () => {
    it("lists the caller's phones that want a kind, most recently seen first", async () => {
      await put({ token: 'one', platform: 'ios' }).expect(200);
      clock.advanceSeconds(10);
      await put({ token: 'two', platform: 'android' }).expect(200);
      await put({ token: 'bos', platform: 'android' }, bo).expect(200);
      await patch('one', { listChanges: false, householdNews: true, runDone: true, reminders: false }).expect(200);
      expect((await devicesFor(ada, 'householdNews')).map((d) => d.token)).to.deep.equal(['two', 'one']);
      expect((await devicesFor(ada, 'listChanges')).map((d) => d.token)).to.deep.equal(['two']);
      expect((await devicesFor(ada, 'reminders')).map((d) => d.token)).to.deep.equal(['two']);
      expect((await devicesFor(ada, 'runDone'))[0]).to.deep.equal((await get('two').expect(200)).body);
    });
    it('never returns a deleted device again, for any kind', async () => {
      await put({ token: fcm, platform: 'android' }).expect(200);
      await del(fcm).expect(204);
      for (const kind of ['listChanges', 'householdNews', 'runDone', 'reminders'] as const) expect(await devicesFor(ada, kind)).to.deep.equal([]);
    });
    it('refuses an unknown kind', async () => {
      let failed = false;
      await devicesFor(ada, 'nonsense' as PushKind).catch(() => {
        failed = true;
      });
      expect(failed).to.equal(true);
    });
  });

  describe('GET (the list)', () => {
    const list = (user = ada) => request(app).get('/api/v1/me/devices').set('X-Test-User', user);

    it("answers the caller's devices only, newest registration first, each as GET of its token answers it", async () => {
      await put({ token: 'first', platform: 'ios' }).expect(200);
      clock.advance(1000);
      await put({ token: 'bos', platform: 'android' }, bo).expect(200);
      clock.advance(1000);
      await put({ token: 'second', platform: 'android', provider: 'apns' }).expect(200);
      clock.advance(1000);
      // Seen again: the registration is not newer, so the order stays.
      await put({ token: 'first', platform: 'ios' }).expect(200);
      const res = await list().expect(200);
      expect(res.headers['cache-control']).to.equal('no-store');
      expect(res.body.items.map((d: { token: string }) => d.token)).to.deep.equal(['second', 'first']);
      expect(res.body.items[1]).to.deep.equal((await get('first').expect(200)).body);
      expect((await list(bo).expect(200)).body).to.deep.equal({ items: [(await get('bos', bo).expect(200)).body] });
    });

    it('puts a token taken over from another account first for its new owner, and drops it from the old one', async () => {
      await put({ token: 'shared', platform: 'ios' }, bo).expect(200);
      clock.advance(1000);
      await put({ token: 'mine', platform: 'ios' }).expect(200);
      clock.advance(1000);
      await put({ token: 'shared', platform: 'ios' }).expect(200);
      expect((await list().expect(200)).body.items.map((d: { token: string }) => d.token)).to.deep.equal(['shared', 'mine']);
      expect((await list(bo).expect(200)).body).to.deep.equal({ items: [] });
    });

    it('answers an empty list to an account without devices, and 401 without a session', async () => {
      expect((await list().expect(200)).body).to.deep.equal({ items: [] });
      expect((await request(app).get('/api/v1/me/devices').expect(401)).body.code).to.equal('unauthenticated');
    });

    it('is what the data export lists (service.list)', async () => {
      await put({ token: fcm, platform: 'android' }).expect(200);
      expect(await service.list(ada)).to.deep.equal((await list().expect(200)).body.items);
    });
  });

  describe('deletionStep (account deletion)', () => {
    it("deletes the person's devices inside the given transaction, and nobody else's", async () => {
      await put({ token: 'a1', platform: 'ios' }).expect(200);
      await put({ token: 'a2', platform: 'android' }).expect(200);
      await put({ token: 'b1', platform: 'ios' }, bo).expect(200);
      // A deletion refused by a later step rolls back: the devices stay.
      const refused = await db.knex
        .transaction(async (trx) => {
          await service.deletionStep.deleteAccountData(ada, trx);
          expect(await trx('pushDevices').where({ userId: ada }).count({ n: '*' }).first()).to.deep.equal({ n: '0' });
          throw new Error('a later step refused');
        })
        .catch((err: Error) => err.message);
      expect(refused).to.equal('a later step refused');
      expect(await rows()).to.equal(3);
      await db.knex.transaction((trx) => service.deletionStep.deleteAccountData(ada, trx));
      expect(await service.list(ada)).to.deep.equal([]);
      expect((await service.list(bo)).map((d) => d.token)).to.deep.equal(['b1']);
      await get('a1').expect(404);
    });
  });

  describe('the declared reads, loaded with the caller or not', () => {
    /** What the read kernel loads of `read` for `account` (and the path's `arg`). */
    const lent = async <T>(read: ReadDeclaration<T>, account: string, arg: string | null = null): Promise<T> => {
      const { rows } = await db.knex.raw(
        `select ${compileValue(read, { account: 'p.account', household: 'null', arg: 'p.arg', known: 'null' })} as v from (select ?::uuid as account, ?::text as arg) p`,
        [account, arg],
      );
      return rows[0].v;
    };
    /** `read` in a request, and the statements it ran. */
    const readAs = async <T>(read: () => Promise<T>) => {
      const ctx = newRequestContext('test');
      const answer = await runWithContext(ctx, read);
      return { answer, statements: ctx.db.queries };
    };

    it('the store answers without them (one statement of their own) exactly what it answers from them (none)', async () => {
      const store = new ObjectionPushStore(db.knex);
      await put({ token: fcm, platform: 'android' }).expect(200);
      clock.advance(1000);
      await put({ token: b64, platform: 'ios', provider: 'apns' }).expect(200);
      await patch(b64, { listChanges: false, householdNews: true, runDone: true, quietHours: { start: '22:00', end: '07:00' } }).expect(200);
      clock.advance(1000);
      // Registered in the same millisecond: the token breaks the tie.
      await put({ token: 'tie-b', platform: 'ios' }).expect(200);
      await put({ token: 'tie-a', platform: 'ios' }).expect(200);
      await put({ token: 'bos', platform: 'ios' }, bo).expect(200);
      // A last-seen time between milliseconds is cut as pg's driver cuts it.
      await db.knex('pushDevices').where({ token: fcm }).update({ lastSeenAt: '2026-11-22 09:00:00.123456+00' });

      for (const token of [fcm, b64, 'bos', 'unknown']) {
        const own = await readAs(() => store.get(ada, token));
        expect(own.statements, token).to.equal(1);
        // A phone that is not the caller's loads `false`: its 404 needs no statement either.
        const value = await lent<Pojo | false>(deviceRead, ada, token);
        expect(value === false, token).to.equal(token === 'bos' || token === 'unknown');
        const fromLent = await readAs(() => store.get(ada, token, value));
        expect(fromLent.answer, token).to.deep.equal(own.answer);
        expect(fromLent.statements, token).to.equal(0);
      }
      expect((await store.get(ada, fcm))?.lastSeenAt).to.equal('2026-11-22T09:00:00.123Z');
      expect(await store.get(ada, 'bos')).to.equal(undefined);

      const own = await readAs(() => store.list(ada));
      expect(own.statements).to.equal(1);
      expect(own.answer.map((d) => d.token)).to.deep.equal(['tie-a', 'tie-b', b64, fcm]);
      const fromLent = await readAs(async () => store.list(ada, await lent(devicesRead, ada)));
      expect(fromLent.answer).to.deep.equal(own.answer);
      expect(await store.list(randomUUID())).to.deep.equal([]);
    });
  });

  it('answers 401 without a session on every operation', async () => {
    await request(app).put('/api/v1/me/devices').send({ token: 't', platform: 'ios' }).expect(401);
    await request(app).get('/api/v1/me/devices').expect(401);
    await request(app).get(at('t')).expect(401);
    await request(app).patch(at('t')).send({ listChanges: true, householdNews: true, runDone: true }).expect(401);
    await request(app).delete(at('t')).expect(401);
    expect(await rows()).to.equal(0);
  });
});
