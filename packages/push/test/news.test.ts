import { randomUUID } from 'node:crypto';
import type { HouseholdNewsEvent } from '@svc/contracts';
import { createLogger, ManualClock, NotFoundError } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import { buildTestApp, createTestDatabase, FakeFcm, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createRouter, FcmProvider, migrations, NotificationService, ObjectionPushStore, PushService } from '../src/index.js';
import { quietWaitMs } from '../src/quiet-hours.js';
import { newsText, shownName } from '../src/texts.js';

describe('quiet hours', () => {
  const oslo = 'Europe/Oslo';
  it('is 0 outside the window and the time to its end inside, across midnight', () => {
    const q = { start: '22:00', end: '07:00' };
    // 20:30 UTC is 21:30 in Oslo (winter, UTC+1): outside.
    expect(quietWaitMs(q, oslo, new Date('2026-11-27T20:30:00Z'))).to.equal(0);
    // 23:15 Oslo: 7 h 45 min to 07:00.
    expect(quietWaitMs(q, oslo, new Date('2026-11-27T22:15:00Z'))).to.equal((7 * 60 + 45) * 60_000);
    // 06:59:30 Oslo: 30 s left.
    expect(quietWaitMs(q, oslo, new Date('2026-11-28T05:59:30Z'))).to.equal(30_000);
    expect(quietWaitMs(q, oslo, new Date('2026-11-28T06:00:00Z'))).to.equal(0);
    // A window within one day.
    expect(quietWaitMs({ start: '13:00', end: '15:00' }, oslo, new Date('2026-11-27T12:30:00Z'))).to.equal(90 * 60_000);
    expect(quietWaitMs(null, oslo, new Date())).to.equal(0);
  });

  it('ends at the wall-clock time across a DST change', () => {
    const q = { start: '22:00', end: '07:00' };
    // Night of 28–29 March 2026: Oslo goes from UTC+1 to UTC+2 at 02:00. 23:00 local = 22:00 UTC;
    // 07:00 local (UTC+2) = 05:00 UTC: 7 hours, not 8.
    expect(quietWaitMs(q, oslo, new Date('2026-03-28T22:00:00Z'))).to.equal(7 * 3_600_000);
    // Night of 24–25 October 2026: back to UTC+1. 23:00 local = 21:00 UTC; 07:00 local = 06:00 UTC: 9 hours.
    expect(quietWaitMs(q, oslo, new Date('2026-10-24T21:00:00Z'))).to.equal(9 * 3_600_000);
  });
});

describe('householdNews texts', () => {
  const e = (type: HouseholdNewsEvent['type'], extra: Partial<HouseholdNewsEvent> = {}): HouseholdNewsEvent => ({
    type,
    householdId: 'h',
    actorUserId: 'a',
    ...extra,
  });
  it('writes each change in English and Norwegian Bokmål, with the household as title', () => {
    expect(newsText('en', e('memberJoined'), { subject: 'Bo', household: 'Home' })).to.deep.equal({ title: 'Home', body: 'Bo joined Home' });
    expect(newsText('nb', e('memberLeft'), { subject: 'Bo', household: 'Hjemme' }).body).to.equal('Bo forlot Hjemme');
    expect(newsText('en', e('memberRemoved'), { actor: 'Ada', subject: 'Bo', household: 'Home' }).body).to.equal('Ada removed Bo from Home');
    expect(newsText('nb', e('roleChanged', { role: 'Junior' }), { actor: 'Ada', subject: 'Bo', household: 'Hjemme' }).body).to.equal(
      'Ada gjorde Bo til junior',
    );
    expect(newsText('en', e('ownershipTransferred'), { actor: 'Ada', subject: 'Bo', household: 'Home' }).body).to.equal('Ada handed Home over to Bo');
    expect(newsText('nb', e('householdRenamed'), { actor: 'Ada', household: 'Hytta' }).body).to.equal('Ada ga husstanden nytt navn: Hytta');
  });
  it('never shows an e-mail address, and says someone for an unknown name', () => {
    expect(shownName('ada@example.com', 'en')).to.equal('Someone');
    expect(shownName(undefined, 'nb')).to.equal('Noen');
    expect(newsText('en', e('memberJoined'), { subject: 'bo@example.com', household: 'Home' }).body).to.equal('Someone joined Home');
  });
});

describe('householdNews delivery: after the commit, batched per phone, held in quiet hours', () => {
  let db: TestDatabase;
  let app: Express;
  let queue: jobs.JobQueue;
  let notifications: NotificationService;
  let fcm: FakeFcm;
  const clock = new ManualClock('2026-11-27T12:00:00.000Z');
  const home = randomUUID();
  const [ada, bo] = [randomUUID(), randomUUID()];
  const names = new Map<string, string>([
    [ada, 'Ada'],
    [bo, 'Bo'],
  ]);
  const members = new Map<string, string[]>([[home, [ada, bo]]]);

  before(async () => {
    db = await createTestDatabase([jobs.migrations, migrations]);
    fcm = new FakeFcm();
    await fcm.start();
    const logger = createLogger({ level: 'silent' });
    queue = new jobs.JobQueue({ knex: db.knex, clock, logger, random: () => 0.5 });
    notifications = new NotificationService({
      knex: db.knex,
      clock,
      jobs: queue,
      accountIds: async (householdId) => members.get(householdId) ?? [],
      profiles: async (householdId) => {
        if (!members.has(householdId)) throw new NotFoundError('not_found', 'No such household');
        return { id: householdId, country: 'NO', timeZoneId: 'Europe/Oslo', preferredLanguage: 'nb' };
      },
      householdName: async () => 'Hjemme',
      displayNames: async (ids) => new Map(ids.flatMap((id) => (names.has(id) ? [[id, names.get(id)!] as [string, string]] : []))),
      providers: { fcm: new FcmProvider({ projectId: fcm.projectId, credentials: fcm.serviceAccount, url: fcm.url, tokenUrl: fcm.tokenUrl, clock }) },
      logger,
    });
    const devices = new PushService({ store: new ObjectionPushStore(db.knex), clock, config: { defaultProvider: 'fcm' } });
    app = buildTestApp({ routers: [createRouter({ service: devices, notifications })] });
  });
  beforeEach(async () => {
    clock.set('2026-11-27T12:00:00.000Z');
    fcm.delivered.length = 0;
    await request(app).put('/api/v1/me/devices').set('X-Test-User', bo).send({ token: 'bo-phone', platform: 'android' }).expect(200);
  });
  afterEach(async () => {
    await db.truncate();
    await db.knex.raw('delete from pgboss.job');
  });
  after(async () => {
    await fcm.stop();
    await db.destroy();
  });

  const change = (event: Partial<HouseholdNewsEvent> & Pick<HouseholdNewsEvent, 'type'>, commit = true) =>
    db.knex
      .transaction(async (trx) => {
        await notifications.news({ householdId: home, actorUserId: ada, ...event }, trx);
        if (!commit) throw new Error('rolled back');
      })
      .catch(() => {});
  /** Runs what is due now (the database's clock), after moving every scheduled job's time back by `seconds`. */
  const passes = async (seconds: number) => {
    await db.knex.raw(`update pgboss.job set start_after = start_after - make_interval(secs => ?) where state = 'created'`, [seconds]);
    return queue.runDue();
  };
  const bodies = () => fcm.delivered.map((d) => (d.message.notification as { body: string }).body);

  it('tells every member but the one who acted, in the household language, only after the change commits', async () => {
    await request(app).put('/api/v1/me/devices').set('X-Test-User', ada).send({ token: 'ada-phone', platform: 'android' }).expect(200);
    await change({ type: 'householdRenamed' }, false);
    await queue.runDue();
    expect(fcm.delivered).to.have.length(0);
    await change({ type: 'roleChanged', subjectUserId: bo, role: 'Junior' });
    await queue.runDue();
    expect(fcm.delivered.map((d) => d.token)).to.deep.equal(['bo-phone']);
    expect(fcm.delivered[0]!.message.notification).to.deep.equal({ title: 'Hjemme', body: 'Ada gjorde Bo til junior' });
    expect((await request(app).get('/api/v1/me/notifications').set('X-Test-User', bo).expect(200)).body.items[0]).to.include({
      kind: 'householdNews',
      body: 'Ada gjorde Bo til junior',
    });
    expect((await request(app).get('/api/v1/me/notifications').set('X-Test-User', ada).expect(200)).body.items).to.have.length(0);
  });

  it('the same news told again with its id (a job run twice) is stored and sent once, inside a transaction or after one; without an id each telling is news', async () => {
    const id = randomUUID();
    await change({ type: 'householdRenamed', id });
    await change({ type: 'householdRenamed', id: id.toUpperCase() });
    await queue.runDue();
    expect(bodies()).to.deep.equal(['Ada ga husstanden nytt navn: Hjemme']);
    const inbox = (await request(app).get('/api/v1/me/notifications').set('X-Test-User', bo).expect(200)).body.items;
    expect(inbox.map((i: { id: string }) => i.id)).to.deep.equal([id]);
    // Told again later (the news job had not been run yet at the first telling, or ran long ago): still once.
    await change({ type: 'householdRenamed', id });
    await queue.runDue();
    expect((await request(app).get('/api/v1/me/notifications').set('X-Test-User', bo).expect(200)).body.items).to.have.length(1);
    // An id that is not a uuid is not trusted as one: a new id, told.
    await change({ type: 'householdRenamed', id: 'not-a-uuid' });
    await queue.runDue();
    expect((await request(app).get('/api/v1/me/notifications').set('X-Test-User', bo).expect(200)).body.items).to.have.length(2);
    // Told without a transaction (a job after the commit): the notification is written at once, no news job; again with its id: nothing more.
    const later = randomUUID();
    clock.advanceSeconds(1); // the newest in the inbox
    await notifications.news({ type: 'householdRenamed', householdId: home, actorUserId: ada, id: later });
    expect(Number((await db.knex.raw(`select count(*)::int as n from pgboss.job where name = 'push-news' and state = 'created'`)).rows[0].n)).to.equal(0);
    expect((await request(app).get('/api/v1/me/notifications').set('X-Test-User', bo).expect(200)).body.items[0].id).to.equal(later);
    await notifications.news({ type: 'householdRenamed', householdId: home, actorUserId: ada, id: later });
    expect((await request(app).get('/api/v1/me/notifications').set('X-Test-User', bo).expect(200)).body.items).to.have.length(3);
  });

  it('the first news goes out at once; more within the next 60 s become one message at the end of that minute', async () => {
    await change({ type: 'memberJoined', subjectUserId: ada });
    await queue.runDue();
    expect(bodies()).to.deep.equal(['Ada ble med i Hjemme']);
    clock.advanceSeconds(10);
    await change({ type: 'householdRenamed' });
    clock.advanceSeconds(10);
    await change({ type: 'roleChanged', subjectUserId: bo, role: 'Adult' });
    await queue.runDue();
    expect(bodies()).to.have.length(1);
    // The digest is due at the end of the minute after the first: 40 s from now.
    clock.advanceSeconds(40);
    await passes(40);
    expect(bodies()).to.deep.equal(['Ada ble med i Hjemme', 'Ada ga husstanden nytt navn: Hjemme\nAda gjorde Bo til voksen']);
    expect(fcm.delivered[1]!.message.data).to.deep.include({ count: '2' });
    // The inbox keeps each.
    expect((await request(app).get('/api/v1/me/notifications').set('X-Test-User', bo).expect(200)).body.items).to.have.length(3);
    // A minute later a news goes out at once again.
    clock.advanceSeconds(61);
    await change({ type: 'memberLeft', subjectUserId: ada });
    await queue.runDue();
    expect(bodies()).to.have.length(3);
  });

  it('two news for one phone delivered in parallel: exactly one goes out at once, the other with the minute', async () => {
    await Promise.all([change({ type: 'memberJoined', subjectUserId: ada }), change({ type: 'householdRenamed' })]);
    // Both news jobs, then both deliveries, run side by side in one pass.
    await queue.runDue();
    expect(bodies()).to.have.length(1);
    clock.advanceSeconds(60);
    await passes(60);
    expect(bodies()).to.have.length(2);
    expect(await passes(120)).to.equal(0);
  });

  it('holds news during quiet hours (across midnight) and sends them as one message when they end', async () => {
    await request(app)
      .patch('/api/v1/me/devices/bo-phone')
      .set('X-Test-User', bo)
      .send({ listChanges: true, householdNews: true, runDone: true, quietHours: { start: '22:00', end: '07:00' } })
      .expect(200);
    clock.set('2026-11-27T22:30:00.000Z'); // 23:30 in Oslo
    await change({ type: 'memberJoined', subjectUserId: ada });
    clock.advanceSeconds(600);
    await change({ type: 'householdRenamed' });
    await queue.runDue();
    expect(fcm.delivered).to.have.length(0);
    // 06:59:59 Oslo: still quiet.
    clock.set('2026-11-28T05:59:59.000Z');
    await queue.runDue();
    expect(fcm.delivered).to.have.length(0);
    // 07:00 Oslo: one message with both.
    clock.set('2026-11-28T06:00:00.000Z');
    await passes(8 * 3600);
    expect(bodies()).to.deep.equal(['Ada ble med i Hjemme\nAda ga husstanden nytt navn: Hjemme']);
  });

  it('holds other kinds (not reminders) until quiet hours end, each as itself', async () => {
    await request(app)
      .patch('/api/v1/me/devices/bo-phone')
      .set('X-Test-User', bo)
      .send({ listChanges: true, householdNews: true, runDone: true, quietHours: { start: '12:00', end: '14:00' } })
      .expect(200);
    await notifications.send(home, { kind: 'listChanges', title: 'Liste', body: 'Melk' });
    await notifications.send(home, { kind: 'reminders', title: 'Middag', body: 'Om 30 minutter' });
    await queue.runDue();
    expect(bodies()).to.deep.equal(['Om 30 minutter']);
    clock.set('2026-11-27T13:00:00.000Z'); // 14:00 in Oslo
    await passes(3 * 3600);
    expect(bodies()).to.deep.equal(['Om 30 minutter', 'Melk']);
  });

  it('a news job run twice (its runner died after the commit) stores and sends the notification once', async () => {
    const id = randomUUID();
    await notifications.send(home, { kind: 'householdNews', title: 'Hjemme', body: 'x' }, undefined, id);
    await notifications.send(home, { kind: 'householdNews', title: 'Hjemme', body: 'x' }, undefined, id);
    await queue.runDue();
    expect(fcm.delivered).to.have.length(1);
    expect((await request(app).get('/api/v1/me/notifications').set('X-Test-User', bo).expect(200)).body.items).to.have.length(1);
  });
});
