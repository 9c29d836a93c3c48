import { randomUUID } from 'node:crypto';
import { createLogger, ManualClock, NotFoundError } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import { buildTestApp, createTestDatabase, FakeApns, FakeFcm, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { ApnsProvider, createRouter, FcmProvider, migrations, NotificationService, ObjectionPushStore, type PushKind, PushService } from '../src/index.js';

describe('notifications: the internal route, delivery to FCM and APNs, the inbox', () => {
  let db: TestDatabase;
  let app: Express;
  let queue: jobs.JobQueue;
  let devices: PushService;
  let fcm: FakeFcm;
  let apns: FakeApns;
  let fcmProvider: FcmProvider;
  let apnsProvider: ApnsProvider;
  let notifications: NotificationService;
  const clock = new ManualClock('2026-11-27T12:00:00.000Z');
  const TOKEN = 'internal-token-of-the-planner';
  const home = randomUUID();
  const [ada, bo, cy] = [randomUUID(), randomUUID(), randomUUID()];
  const members = new Map<string, string[]>([[home, [ada, bo, cy]]]);

  before(async () => {
    db = await createTestDatabase([jobs.migrations, migrations]);
    fcm = new FakeFcm();
    apns = new FakeApns();
    await Promise.all([fcm.start(), apns.start()]);
    apns.now = () => Date.now();
    fcmProvider = new FcmProvider({ projectId: fcm.projectId, credentials: fcm.serviceAccount, url: fcm.url, tokenUrl: fcm.tokenUrl, clock, timeoutMs: 2000 });
    apnsProvider = new ApnsProvider({
      keyId: apns.keyId,
      teamId: apns.teamId,
      key: apns.p8,
      topic: 'no.example.app',
      url: apns.url,
      clock: { now: () => new Date() },
      ca: apns.ca,
    });
    const logger = createLogger({ level: 'silent' });
    queue = new jobs.JobQueue({ knex: db.knex, clock, logger, random: () => 0.5 });
    devices = new PushService({ store: new ObjectionPushStore(db.knex), clock, config: { defaultProvider: 'fcm' } });
    notifications = new NotificationService({
      knex: db.knex,
      clock,
      jobs: queue,
      accountIds: async (householdId) => members.get(householdId) ?? [],
      profiles: async (householdId) => {
        if (!members.has(householdId)) throw new NotFoundError('not_found', 'No such household');
        return { id: householdId, country: 'NO', timeZoneId: 'Europe/Oslo', preferredLanguage: 'nb' };
      },
      providers: { fcm: fcmProvider, apns: apnsProvider },
      logger,
    });
    app = buildTestApp({ routers: [createRouter({ service: devices, notifications, internalTokens: ['another-service-token', TOKEN] })] });
  });
  beforeEach(() => {
    clock.set('2026-11-27T12:00:00.000Z');
    fcm.delivered.length = 0;
    apns.delivered.length = 0;
    fcm.script.length = 0;
  });
  afterEach(async () => {
    await db.truncate();
    await db.knex.raw('delete from pgboss.job');
  });
  after(async () => {
    await apnsProvider.close();
    await Promise.all([fcm.stop(), apns.stop()]);
    await db.destroy();
  });

  const send = (body: Record<string, unknown>, householdId = home, token: string | null = TOKEN) => {
    const r = request(app).post(`/internal/v1/households/${householdId}/notifications`);
    return token ? r.set('Authorization', `Bearer ${token}`).send(body) : r.send(body);
  };
  const register = (user: string, token: string, platform: 'ios' | 'android', provider = platform === 'ios' ? 'apns' : 'fcm') =>
    request(app).put('/api/v1/me/devices').set('X-Test-User', user).send({ token, platform, provider }).expect(200);
  const inbox = (user: string, query = '') => request(app).get(`/api/v1/me/notifications${query}`).set('X-Test-User', user);
  const note = { kind: 'listChanges' as PushKind, title: 'Handleliste', body: 'Ada la til melk' };

  describe('the internal route', () => {
    it('answers 401 unauthenticated without a bearer, with a wrong one, and with only a session', async () => {
      for (const r of [
        await send(note, home, null),
        await send(note, home, 'wrong'),
        await send(note, home, `${TOKEN}x`),
        await request(app).post(`/internal/v1/households/${home}/notifications`).set('X-Test-User', ada).send(note),
      ]) {
        expect(r.status).to.equal(401);
        expect(r.body.code).to.equal('unauthenticated');
      }
      // The bearer is judged before the body: a bad body without a valid bearer is still 401.
      expect((await send({ kind: 'nope' }, home, 'wrong')).status).to.equal(401);
    });

    it('answers 202 with the id and the number of people, every member with an account but excludeUserId', async () => {
      const res = await send({ ...note, excludeUserId: ada }).expect(202);
      expect(res.body.recipients).to.equal(2);
      expect(res.body.id).to.match(/^[0-9a-f-]{36}$/);
      expect((await send(note, home, 'another-service-token').expect(202)).body.recipients).to.equal(3);
      // A session cookie beside a valid bearer changes nothing.
      expect((await send(note).set('X-Test-User', bo).expect(202)).body.recipients).to.equal(3);
    });

    it('answers 400 validation_failed over a limit (characters for title and body, 2,048 bytes for data) and for an unknown kind', async () => {
      expect((await send({ ...note, kind: 'gossip' }).expect(400)).body.code).to.equal('validation_failed');
      expect((await send({ ...note, title: 'x'.repeat(101) }).expect(400)).body.code).to.equal('validation_failed');
      expect((await send({ ...note, body: 'x'.repeat(501) }).expect(400)).body.code).to.equal('validation_failed');
      expect((await send({ ...note, data: { blob: 'x'.repeat(2040) } }).expect(400)).body.code).to.equal('validation_failed');
      // As strict as the public routes (issue 47): no CR or LF (a header or log line split) in the
      // visible texts, and excludeUserId is an account id.
      for (const bad of [
        { ...note, title: 'Hi\r\nX-Injected: 1' },
        { ...note, body: 'line one\nline two' },
        { ...note, title: 'bidi \u202e' },
        { ...note, excludeUserId: 'not-a-uuid' },
        { ...note, excludeUserId: `${ada}\n` },
      ])
        expect((await send(bad).expect(400)).body.code, JSON.stringify(bad)).to.equal('validation_failed');
      // 100 characters of two UTF-16 units each: within the limit.
      await send({ ...note, title: '🍅'.repeat(100), body: 'ø'.repeat(500), data: { blob: 'x'.repeat(2030) } }).expect(202);
    });

    it('answers 404 for an unknown household', async () => {
      expect((await send(note, randomUUID()).expect(404)).body.code).to.equal('not_found');
    });

    it('answers 404 not_found when the service has no internal tokens', async () => {
      const closed = buildTestApp({
        routers: [createRouter({ service: devices, notifications: undefined as unknown as NotificationService, internalTokens: [] })],
      });
      await request(closed).post(`/internal/v1/households/${home}/notifications`).set('Authorization', `Bearer ${TOKEN}`).send(note).expect(404);
      const noTokens = buildTestApp({
        routers: [
          createRouter({
            service: devices,
            notifications: new NotificationService({
              knex: db.knex,
              clock,
              jobs: new jobs.JobQueue({ knex: db.knex, clock, logger: createLogger({ level: 'silent' }) }),
              accountIds: async () => [],
              profiles: async (id) => ({ id, country: 'NO', timeZoneId: 'Europe/Oslo', preferredLanguage: 'nb' }),
              providers: {},
              logger: createLogger({ level: 'silent' }),
            }),
          }),
        ],
      });
      expect(
        (await request(noTokens).post(`/internal/v1/households/${home}/notifications`).set('Authorization', `Bearer ${TOKEN}`).send(note).expect(404)).body
          .code,
      ).to.equal('not_found');
    });
  });

  describe('delivery', () => {
    it('each phone of each recipient that wants the kind gets exactly one message, at FCM or APNs', async () => {
      await register(ada, 'ada-android', 'android');
      await register(bo, 'bo-iphone', 'ios');
      await register(bo, 'bo-tablet', 'android');
      await register(cy, 'cy-phone', 'android');
      await register(cy, 'cy-other', 'android', 'huawei'); // stored, never delivered
      // Cy switched listChanges off on the phone.
      await request(app)
        .patch('/api/v1/me/devices/cy-phone')
        .set('X-Test-User', cy)
        .send({ listChanges: false, householdNews: true, runDone: true })
        .expect(200);
      const { body } = await send({ ...note, data: { listId: 'l1', n: 2 }, excludeUserId: ada }).expect(202);
      // One job: the notification's fan-out to every phone.
      expect(await queue.runDue()).to.equal(1);
      expect(fcm.delivered.map((d) => d.token)).to.deep.equal(['bo-tablet']);
      expect(fcm.delivered[0]!.message.notification).to.deep.equal({ title: 'Handleliste', body: 'Ada la til melk' });
      expect(fcm.delivered[0]!.message.data).to.deep.include({ listId: 'l1', n: '2', notificationId: body.id, householdId: home, kind: 'listChanges' });
      expect(apns.delivered.map((d) => d.token)).to.deep.equal(['bo-iphone']);
      expect(apns.delivered[0]!.headers['apns-collapse-id']).to.equal(`${home}:listChanges`);
      // Nothing more is due: no phone gets it twice.
      expect(await queue.runDue()).to.equal(0);
    });

    it('reads the phones and notifications of the fan-outs a runner starts together in one SELECT, and each phone gets its own', async () => {
      const phones = ['ada-1', 'ada-2', 'bo-1', 'bo-2', 'cy-1', 'cy-2'];
      for (const t of phones) await register(t.startsWith('ada') ? ada : t.startsWith('bo') ? bo : cy, t, 'android');
      const first = (await send(note).expect(202)).body.id as string;
      const second = (await send({ ...note, body: 'Bo la til brød' }).expect(202)).body.id as string;
      const reads: string[] = [];
      const onQuery = (query: { sql: string }) => {
        if (/join push_devices/.test(query.sql)) reads.push(query.sql);
      };
      db.knex.on('query', onQuery);
      try {
        expect(await queue.runDue()).to.equal(2);
      } finally {
        db.knex.off('query', onQuery);
      }
      expect(reads).to.have.length(1);
      const got = fcm.delivered.map((d) => `${d.token} ${String((d.message.data as Record<string, unknown>).notificationId)}`).sort();
      expect(got).to.deep.equal(phones.flatMap((t) => [`${t} ${first}`, `${t} ${second}`]).sort());
      expect(await queue.runDue()).to.equal(0);
    });

    it('deletes a device whose token the provider calls gone (FCM UNREGISTERED, APNs 410)', async () => {
      await register(ada, 'ada-gone', 'android');
      await register(bo, 'bo-gone', 'ios');
      fcm.unregister('ada-gone');
      apns.unregister('bo-gone');
      await send(note).expect(202);
      await queue.runDue();
      await request(app).get('/api/v1/me/devices/ada-gone').set('X-Test-User', ada).expect(404);
      await request(app).get('/api/v1/me/devices/bo-gone').set('X-Test-User', bo).expect(404);
      expect(fcm.delivered).to.have.length(0);
    });

    it('retries a provider answering 429 no sooner than its Retry-After, then delivers once', async () => {
      await register(ada, 'ada-android', 'android');
      fcm.script.push({ status: 429, headers: { 'Retry-After': '30' } });
      await send(note).expect(202);
      await queue.runDue();
      expect(fcm.delivered).to.have.length(0);
      const waiting = await db.knex.raw(`select extract(epoch from start_after - now())::float8 as due_in from pgboss.job where state = 'created'`);
      expect(waiting.rows).to.have.length(1);
      expect(waiting.rows[0].due_in).to.be.within(29, 30.1);
      await db.knex.raw(`update pgboss.job set start_after = now() - interval '1 second' where state = 'created'`);
      await queue.runDue();
      expect(fcm.delivered.map((d) => d.token)).to.deep.equal(['ada-android']);
    });

    it('records each phone it is done with: a fan-out run again (its runner vanished, the job put back) sends only to phones not recorded', async () => {
      await register(ada, 'ada-1', 'android');
      await register(bo, 'bo-1', 'android');
      await register(cy, 'cy-quiet', 'android');
      // Cy's phone is in its quiet hours (13:00 in Oslo now): handed to a delivery job of its own.
      await request(app)
        .patch('/api/v1/me/devices/cy-quiet')
        .set('X-Test-User', cy)
        .send({ listChanges: true, householdNews: true, runDone: true, quietHours: { start: '12:30', end: '14:00' } })
        .expect(200);
      const id = (await send(note).expect(202)).body.id as string;
      expect(await queue.runDue()).to.equal(1);
      expect(fcm.delivered.map((d) => d.token).sort()).to.deep.equal(['ada-1', 'bo-1']);
      const outcomes = await db.knex.raw(
        `select d.token, x.outcome from push_deliveries x
         join push_devices d on d.token_hash = x.token_hash where x.notification_id = ? order by 1`,
        [id],
      );
      expect(outcomes.rows.map((r: { token: string; outcome: string }) => `${r.token} ${r.outcome}`)).to.deep.equal([
        'ada-1 sent',
        'bo-1 sent',
        'cy-quiet held',
      ]);
      const held = () => db.knex.raw(`select data->'p'->>'t' as t from pgboss.job where name = 'push-deliver'`).then((r) => r.rows);
      expect(await held()).to.have.length(1);
      // The fan-out put back as the queue's expiry does for a vanished runner, with Bo's record lost (his answer came, its record did not).
      await db.knex.raw(`delete from push_deliveries x using push_devices d where d.token_hash = x.token_hash and d.token = 'bo-1'`);
      await db.knex.raw(`update pgboss.job set state = 'created', completed_on = null, start_after = now() - interval '1 second' where name = 'push-fanout'`);
      expect(await queue.runDue()).to.equal(1);
      // Only the phone without a record is sent again; the quiet one is not handed over twice.
      expect(fcm.delivered.map((d) => d.token).sort()).to.deep.equal(['ada-1', 'bo-1', 'bo-1']);
      expect(await held()).to.have.length(1);
      // At 14:00 in Oslo Cy's phone gets it, once.
      clock.set('2026-11-27T13:00:00.000Z');
      await db.knex.raw(`update pgboss.job set start_after = now() - interval '1 second' where state = 'created'`);
      expect(await queue.runDue()).to.equal(1);
      expect(fcm.delivered.filter((d) => d.token === 'cy-quiet')).to.have.length(1);
    });

    it('retries only the phones a provider failed, as one job of just those, and each phone gets it once', async () => {
      for (const [user, token] of [
        [ada, 'ada-1'],
        [bo, 'bo-1'],
        [cy, 'cy-1'],
      ] as const)
        await register(user, token, 'android');
      const sendsBefore = fcm.sends;
      fcm.script.push({ status: 503, headers: { 'Retry-After': '20' } });
      const id = (await send(note).expect(202)).body.id as string;
      await queue.runDue();
      expect(fcm.delivered).to.have.length(2);
      const first = new Set(fcm.delivered.map((d) => d.token));
      const retry = await db.knex.raw(
        `select data, extract(epoch from start_after - now())::float8 as due_in from pgboss.job where name = 'push-fanout' and state = 'created'`,
      );
      expect(retry.rows).to.have.length(1);
      expect(retry.rows[0].due_in).to.be.within(19, 20.1);
      expect(retry.rows[0].data.a).to.equal(2);
      expect(retry.rows[0].data.p.n).to.equal(id);
      expect(retry.rows[0].data.p.t).to.have.length(1);
      await db.knex.raw(`update pgboss.job set start_after = now() - interval '1 second' where state = 'created'`);
      expect(await queue.runDue()).to.equal(1);
      const per = new Map<string, number>();
      for (const d of fcm.delivered) per.set(d.token, (per.get(d.token) ?? 0) + 1);
      expect([...per.keys()].sort()).to.deep.equal(['ada-1', 'bo-1', 'cy-1']);
      expect([...per.values()]).to.deep.equal([1, 1, 1]);
      expect([...first].every((t) => per.get(t) === 1)).to.equal(true);
      // The 503 and three deliveries: nobody was sent twice.
      expect(fcm.sends - sendsBefore).to.equal(4);
    });

    it('a phone switched off or deleted after the notification was sent gets nothing', async () => {
      await register(ada, 'ada-android', 'android');
      await register(bo, 'bo-android', 'android');
      await send(note).expect(202);
      await request(app)
        .patch('/api/v1/me/devices/ada-android')
        .set('X-Test-User', ada)
        .send({ listChanges: false, householdNews: true, runDone: true })
        .expect(200);
      await request(app).delete('/api/v1/me/devices/bo-android').set('X-Test-User', bo).expect(204);
      await queue.runDue();
      expect(fcm.delivered).to.have.length(0);
    });
  });

  describe('reminders (SendReminder, called by @svc/meal-events)', () => {
    const reminder = (over: Record<string, unknown> = {}) => ({
      id: randomUUID(),
      householdId: home,
      eventId: randomUUID(),
      date: '2026-11-27',
      servingTime: '18:00',
      eventType: 'Guests',
      minutes: 30,
      userIds: [ada, bo, cy, randomUUID()],
      at: new Date('2026-11-27T16:30:00.000Z'),
      ...over,
    });

    it('goes to the phones of the people named that want reminders, in the household language, through quiet hours; the inbox keeps it for each', async () => {
      await register(ada, 'ada-android', 'android');
      await register(bo, 'bo-iphone', 'ios');
      await register(cy, 'cy-phone', 'android');
      // Ada sleeps 13:00–15:00 Oslo time; it is 13:00 there now: reminders come all the same.
      await request(app)
        .patch('/api/v1/me/devices/ada-android')
        .set('X-Test-User', ada)
        .send({ listChanges: true, householdNews: true, runDone: true, quietHours: { start: '13:00', end: '15:00' } })
        .expect(200);
      await request(app)
        .patch('/api/v1/me/devices/cy-phone')
        .set('X-Test-User', cy)
        .send({ listChanges: true, householdNews: true, runDone: true, reminders: false })
        .expect(200);
      const r = reminder();
      await notifications.remind(r);
      await queue.runDue();
      expect(fcm.delivered.map((d) => d.token)).to.deep.equal(['ada-android']);
      expect(fcm.delivered[0]!.message.notification).to.deep.equal({ title: 'Påminnelse: Gjester', body: 'Gjester kl. 18:00 2026-11-27' });
      expect(fcm.delivered[0]!.message.data).to.deep.include({ eventId: r.eventId, kind: 'reminders', reminderMinutes: '30', notificationId: r.id });
      expect(apns.delivered.map((d) => d.token)).to.deep.equal(['bo-iphone']);
      for (const user of [ada, bo, cy]) expect((await inbox(user).expect(200)).body.items.map((i: { id: string }) => i.id)).to.deep.equal([r.id]);
      // The same reminder again (its job ran twice): nothing more is stored or sent.
      await notifications.remind(r);
      expect(await queue.runDue()).to.equal(0);
      expect((await inbox(ada).expect(200)).body.items).to.have.length(1);
    });

    it('leaves out whoever is no longer a member with an account, and sends nothing for a household that is gone', async () => {
      await register(ada, 'ada-android', 'android');
      await register(bo, 'bo-android', 'android');
      await notifications.remind(reminder({ userIds: [bo] }));
      await notifications.remind(reminder({ householdId: randomUUID() }));
      await queue.runDue();
      expect(fcm.delivered.map((d) => d.token)).to.deep.equal(['bo-android']);
      expect((await inbox(ada).expect(200)).body.items).to.have.length(0);
    });
  });

  describe('the inbox', () => {
    it('keeps every notification for every person it was for, newest first, whatever their phones', async () => {
      await register(ada, 'ada-android', 'android');
      await request(app)
        .patch('/api/v1/me/devices/ada-android')
        .set('X-Test-User', ada)
        .send({ listChanges: false, householdNews: false, runDone: false })
        .expect(200);
      const first = (await send(note).expect(202)).body;
      clock.advanceSeconds(5);
      const second = (await send({ kind: 'runDone', title: 'Plan ready', body: 'Next week is planned', data: { runId: 'r1' } }).expect(202)).body;
      const res = await inbox(ada).expect(200);
      expect(res.body).to.deep.equal({
        items: [
          {
            id: second.id,
            householdId: home,
            kind: 'runDone',
            title: 'Plan ready',
            body: 'Next week is planned',
            data: { runId: 'r1' },
            createdAt: '2026-11-27T12:00:05.000Z',
            readAt: null,
          },
          { id: first.id, householdId: home, ...note, data: {}, createdAt: '2026-11-27T12:00:00.000Z', readAt: null },
        ],
        nextCursor: null,
      });
      // Excluded people do not get it in their inbox either.
      await send({ ...note, excludeUserId: bo }).expect(202);
      expect((await inbox(bo).expect(200)).body.items).to.have.length(2);
    });

    it('pages with limit and nextCursor, and refuses a bad limit or cursor with 400', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push((await send({ ...note, title: `n${i}` }).expect(202)).body.id);
        clock.advanceSeconds(1);
      }
      const p1 = (await inbox(ada, '?limit=2').expect(200)).body;
      expect(p1.items.map((i: { title: string }) => i.title)).to.deep.equal(['n4', 'n3']);
      const p2 = (await inbox(ada, `?limit=2&cursor=${p1.nextCursor}`).expect(200)).body;
      expect(p2.items.map((i: { title: string }) => i.title)).to.deep.equal(['n2', 'n1']);
      const p3 = (await inbox(ada, `?limit=2&cursor=${p2.nextCursor}`).expect(200)).body;
      expect(p3.items.map((i: { title: string }) => i.title)).to.deep.equal(['n0']);
      expect(p3.nextCursor).to.equal(null);
      for (const q of ['?limit=0', '?limit=101']) expect((await inbox(ada, q).expect(400)).body.code).to.equal('validation_failed');
      await request(app).get('/api/v1/me/notifications').expect(401);
    });

    it('a cursor it did not hand out, or handed out for another person, is 400 invalid_cursor (decisions §2), never another page', async () => {
      for (let i = 0; i < 3; i++) {
        await send({ ...note, title: `n${i}` }).expect(202);
        clock.advanceSeconds(1);
      }
      const adas = (await inbox(ada, '?limit=1').expect(200)).body.nextCursor as string;
      const bos = (await inbox(bo, '?limit=1').expect(200)).body.nextCursor as string;
      expect(adas).to.be.a('string');
      // The same position, another person's list: refused both ways.
      for (const [user, cursor] of [
        [bo, adas],
        [ada, bos],
      ] as const) {
        const res = await inbox(user, `?cursor=${encodeURIComponent(cursor)}`).expect(400);
        expect(res.body).to.include({ code: 'invalid_cursor', status: 400 });
        expect(res.body.errors[0]).to.include({ field: 'cursor' });
      }
      const forged = Buffer.from(JSON.stringify(['2026-11-27T12:00:00.000Z', randomUUID()])).toString('base64url');
      const altered = `${adas.slice(0, -2)}${adas.endsWith('A') ? 'B' : 'A'}A`;
      for (const bad of ['nonsense', 'not-a-cursor-!', '', 'x'.repeat(501), forged, altered, '%00', Buffer.from('[]').toString('base64url')]) {
        const res = await inbox(ada, `?cursor=${encodeURIComponent(bad)}`);
        expect(res.status, bad).to.equal(400);
        expect(res.body.code, bad).to.equal('invalid_cursor');
      }
      // The person's own cursor still works.
      expect((await inbox(ada, `?limit=1&cursor=${encodeURIComponent(adas)}`).expect(200)).body.items).to.have.length(1);
    });

    it('forgets notifications after 30 days', async () => {
      await send(note).expect(202);
      clock.advance(31 * 86_400_000);
      expect((await inbox(ada).expect(200)).body.items).to.have.length(0);
    });

    it('marks an item and every older one read; an id that is not one of the caller’s answers 404', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push((await send({ ...note, title: `n${i}` }).expect(202)).body.id);
        clock.advanceSeconds(1);
      }
      await request(app).post('/api/v1/me/notifications/read').set('X-Test-User', ada).send({ upTo: ids[1] }).expect(204);
      const items = (await inbox(ada).expect(200)).body.items as { title: string; readAt: string | null }[];
      expect(items.map((i) => [i.title, i.readAt])).to.deep.equal([
        ['n2', null],
        ['n1', '2026-11-27T12:00:03.000Z'],
        ['n0', '2026-11-27T12:00:03.000Z'],
      ]);
      // Bo's items are untouched.
      expect(((await inbox(bo).expect(200)).body.items as { readAt: string | null }[]).every((i) => i.readAt === null)).to.equal(true);
      const excluded = (await send({ ...note, excludeUserId: ada }).expect(202)).body.id;
      for (const upTo of [randomUUID(), excluded, 'not-an-id'])
        expect((await request(app).post('/api/v1/me/notifications/read').set('X-Test-User', ada).send({ upTo }).expect(404)).body.code).to.equal('not_found');
    });
  });
});
