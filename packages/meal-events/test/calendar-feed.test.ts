import { createHash, randomUUID } from 'node:crypto';
import { compileValue, type Pojo } from '@svc/db';
import { buildOpenApiDocument, createHttpApp, type Logger, ManualClock, newRequestContext, runWithContext } from '@svc/http-kit';
import { connectTestRedis, createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import type { Express } from 'express';
import ICAL from 'ical.js';
import nodeIcal from 'node-ical';
import request from 'supertest';
import { calendarFeedLimits, calendarFeedRead, createRouter, migrations, ObjectionCalendarFeedStore } from '../src/index.js';
import { buildEventsApp, MemoryAccess } from './helpers.js';

/** The feed as ical.js reads it, with the zones it carries registered (and no others). */
function parseFeed(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  ICAL.TimezoneService.reset();
  for (const vtz of calendar.getAllSubcomponents('vtimezone')) ICAL.TimezoneService.register(vtz);
  const events = calendar.getAllSubcomponents('vevent').map((v) => {
    const e = new ICAL.Event(v);
    return {
      uid: e.uid,
      summary: e.summary,
      description: e.description,
      sequence: e.sequence,
      local: e.startDate.toString(),
      tzid: e.startDate.zone?.tzid,
      utc: e.startDate.toJSDate().toISOString(),
      duration: e.duration.toString(),
      lastModified: (v.getFirstPropertyValue('last-modified') as ICAL.Time).toString(),
      stamp: (v.getFirstPropertyValue('dtstamp') as ICAL.Time).toString(),
    };
  });
  return { calendar, events, zones: calendar.getAllSubcomponents('vtimezone').map((z) => z.getFirstPropertyValue('tzid')) };
}

/** RFC 5545 grammar: every calendar property comes before the first component (VTIMEZONE, VEVENT). */
function propertiesAfterComponents(text: string): string[] {
  let depth = 0;
  let seenComponent = false;
  const out: string[] = [];
  for (const line of text.split('\r\n')) {
    if (line.startsWith(' ') || line === '') continue;
    if (line.startsWith('BEGIN:')) {
      depth++;
      if (depth === 2) seenComponent = true;
    } else if (line.startsWith('END:')) depth--;
    else if (depth === 1 && seenComponent) out.push(line);
  }
  return out;
}

/** Lines of the feed as sent (folded), split only at CRLF. */
function rawLines(text: string): string[] {
  return text.split('\r\n');
}

describe('calendar feed', () => {
  let db: TestDatabase;
  let app: Express;
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const access = new MemoryAccess();
  const oslo = randomUUID();
  const newYork = randomUUID();
  const owner = randomUUID();
  const adult = randomUUID();
  const junior = randomUUID();
  const stranger = randomUUID();
  const ada = randomUUID();
  const feedPath = (h = oslo) => `/api/v1/households/${h}/calendar-feed`;
  const eventsPath = (h = oslo) => `/api/v1/households/${h}/events`;

  before(async () => {
    db = await createTestDatabase([migrations]);
    access
      .set(oslo, owner, 'Owner')
      .set(oslo, adult, 'Adult')
      .set(oslo, junior, 'Junior')
      .set(newYork, owner, 'Owner')
      .zone(oslo, 'Europe/Oslo')
      .zone(newYork, 'America/New_York')
      .addMember(oslo, ada);
    app = buildEventsApp({ knex: db.knex, clock, access }).app;
  });
  beforeEach(() => clock.set('2026-11-22T09:00:00.000Z'));
  afterEach(() => db.truncate());
  after(() => db.destroy());

  const as = (user: string) => ({
    post: (path: string, body?: object) => request(app).post(path).set('X-Test-User', user).send(body),
    get: (path: string) => request(app).get(path).set('X-Test-User', user),
    put: (path: string, body: object) => request(app).put(path).set('X-Test-User', user).send(body),
    del: (path: string) => request(app).delete(path).set('X-Test-User', user),
  });
  /** The feed's path on this service (the URL's path; the test app is not at PUBLIC_BASE_URL). */
  const pathOf = (url: string) => new URL(url).pathname;
  const newFeed = async (h = oslo, user = owner) => (await as(user).post(feedPath(h)).expect(201)).body as { url: string; createdAt: string };
  const event = (over: Record<string, unknown> = {}) => ({
    date: '2026-11-28',
    eventType: 'Guests',
    servingTime: '18:00',
    availableCookingMinutes: 60,
    notes: '',
    participants: [],
    ...over,
  });
  const addEvent = async (over: Record<string, unknown> = {}, h = oslo) => (await as(owner).post(eventsPath(h), event(over)).expect(201)).body;

  describe('POST …/calendar-feed', () => {
    it('answers 201 with a secret URL on PUBLIC_BASE_URL holding 256 random bits, and stores only its hash and a sealed copy', async () => {
      const res = await as(owner).post(feedPath()).expect(201);
      expect(Object.keys(res.body)).to.deep.equal(['url', 'createdAt']);
      expect(res.body.createdAt).to.equal('2026-11-22T09:00:00.000Z');
      const m = /^https:\/\/meals\.example\.com\/calendar\/([A-Za-z0-9_-]{43})\.ics$/.exec(res.body.url);
      expect(m, res.body.url).to.not.equal(null);
      const token = m![1]!;
      expect(Buffer.from(token, 'base64url')).to.have.length(32);
      const rows = await db.knex('calendarFeeds').select('*');
      expect(rows).to.have.length(1);
      expect(rows[0].householdId).to.equal(oslo);
      expect(Buffer.compare(rows[0].tokenHash, createHash('sha256').update(token).digest())).to.equal(0);
      // Nothing in the row is the token, in any encoding the URL uses.
      const stored = JSON.stringify(rows[0], (_k, v) => (v?.type === 'Buffer' ? Buffer.from(v.data).toString('latin1') : v));
      expect(stored).to.not.include(token);
      expect(stored).to.not.include(Buffer.from(token, 'base64url').toString('latin1'));
      expect(res.headers['cache-control']).to.equal('no-store');
    });

    it('lets an Adult make one; a Junior gets 403 forbidden, a non-member 404 not_found, no session 401', async () => {
      await as(adult).post(feedPath()).expect(201);
      expect((await as(junior).post(feedPath()).expect(403)).body.code).to.equal('forbidden');
      expect((await as(stranger).post(feedPath()).expect(404)).body.code).to.equal('not_found');
      expect((await request(app).post(feedPath()).expect(401)).body.code).to.equal('unauthenticated');
      expect((await as(owner).post('/api/v1/households/nope/calendar-feed').expect(400)).body.code).to.equal('validation_failed');
      expect(await db.knex('calendarFeeds').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    });

    it('retires the previous URL at once: it answers 404, the new one 200', async () => {
      const first = await newFeed();
      await request(app).get(pathOf(first.url)).expect(200);
      clock.advance(60_000);
      const second = await newFeed();
      expect(second.url).to.not.equal(first.url);
      expect(second.createdAt).to.equal('2026-11-22T09:01:00.000Z');
      expect((await request(app).get(pathOf(first.url)).expect(404)).body.code).to.equal('not_found');
      await request(app).get(pathOf(second.url)).expect(200);
      expect((await as(owner).get(feedPath()).expect(200)).body).to.deep.equal(second);
    });

    it('parallel POSTs leave one feed: exactly one of the answered URLs works, and GET shows that one', async () => {
      const made = await Promise.all(Array.from({ length: 6 }, () => newFeed()));
      expect(new Set(made.map((f) => f.url)).size).to.equal(6);
      expect(await db.knex('calendarFeeds').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
      const statuses = await Promise.all(made.map(async (f) => (await request(app).get(pathOf(f.url))).status));
      expect(statuses.filter((s) => s === 200)).to.have.length(1);
      expect(statuses.filter((s) => s === 404)).to.have.length(5);
      const working = made[statuses.indexOf(200)]!;
      expect((await as(owner).get(feedPath()).expect(200)).body.url).to.equal(working.url);
    });
  });

  describe('GET …/calendar-feed', () => {
    it('answers the current URL to the Owner and an Adult', async () => {
      const made = await newFeed();
      expect((await as(owner).get(feedPath()).expect(200)).body).to.deep.equal(made);
      expect((await as(adult).get(feedPath()).expect(200)).body).to.deep.equal(made);
    });

    it('answers 404 not_found when there is none, 403 to a Junior, 404 to a non-member, 401 without a session', async () => {
      expect((await as(owner).get(feedPath()).expect(404)).body.code).to.equal('not_found');
      await newFeed();
      expect((await as(junior).get(feedPath()).expect(403)).body.code).to.equal('forbidden');
      expect((await as(stranger).get(feedPath()).expect(404)).body.code).to.equal('not_found');
      expect((await request(app).get(feedPath()).expect(401)).body.code).to.equal('unauthenticated');
    });

    describe('loaded with the session (the declared read calendarFeedRead)', () => {
      /** What the read kernel loads of `calendarFeedRead` for household `h` (it asks only for a member). */
      const lent = async (h: string): Promise<Pojo | false> => {
        const { rows } = await db.knex.raw(
          `select ${compileValue(calendarFeedRead, { account: 'null', household: 'p.id', arg: 'null', known: 'null' })} as v from (select ?::uuid as id) p`,
          [h],
        );
        return rows[0].v;
      };
      /** `read` in a request, and the statements it ran. */
      const readAs = async <T>(read: () => Promise<T>) => {
        const ctx = newRequestContext('test');
        const answer = await runWithContext(ctx, read);
        return { answer, statements: ctx.db.queries };
      };

      it("gives the store, without a statement, exactly what the store's own read answers: the feed, and none", async () => {
        const store = new ObjectionCalendarFeedStore(db.knex);
        const { calendar } = buildEventsApp({ knex: db.knex, clock, access });

        // No feed: the read loads "none" (not null), so the 404 costs no statement of its own.
        const none = await lent(oslo);
        expect(none).to.equal(false);
        const absent = await readAs(() => store.get(oslo, none));
        expect(absent.statements).to.equal(0);
        expect(absent.answer).to.equal(undefined);
        expect(await store.get(oslo)).to.equal(undefined);

        const made = await newFeed();
        // A created_at between milliseconds is not possible (precision 3); one on a whole second still has its ".000".
        await db.knex('calendarFeeds').where({ householdId: oslo }).update({ createdAt: '2026-03-04 05:06:07.5+00' });
        const own = await store.get(oslo);
        expect(own?.createdAt).to.equal('2026-03-04T05:06:07.500Z');
        const value = await lent(oslo);
        const fromLent = await readAs(() => store.get(oslo, value));
        expect(fromLent.statements).to.equal(0);
        expect(fromLent.answer).to.deep.equal(own);
        expect(Buffer.isBuffer(fromLent.answer?.sealedToken) && Buffer.isBuffer(fromLent.answer?.tokenHash)).to.equal(true);
        await db.knex('calendarFeeds').where({ householdId: oslo }).update({ createdAt: '2026-03-04 05:06:07+00' });
        const loadedWhole = await lent(oslo);
        const whole = await readAs(() => store.get(oslo, loadedWhole));
        expect(whole.answer?.createdAt).to.equal('2026-03-04T05:06:07.000Z');
        expect(whole.answer).to.deep.equal(await store.get(oslo));

        // The service's answer (the URL opened from the loaded sealed token) is the one without it.
        const served = await readAs(() => calendar.get({ userId: owner }, oslo, loadedWhole as never));
        expect(served.statements).to.equal(0);
        expect(served.answer).to.deep.equal(await calendar.get({ userId: owner }, oslo));
        expect(served.answer.url).to.equal(made.url);
        // A Junior is refused before anything loaded is looked at.
        const refused = await readAs(() =>
          calendar.get({ userId: junior }, oslo, loadedWhole as never).then(
            () => 'answered',
            (err: { status?: number }) => err.status,
          ),
        );
        expect(refused.answer).to.equal(403);
        // Nothing loaded: the store runs the same declared read as a statement of its own.
        const itself = await readAs(() => store.get(oslo));
        expect(itself.statements).to.equal(1);

        // Deleted: "none" again.
        await as(owner).del(feedPath()).expect(204);
        expect(await lent(oslo)).to.equal(false);
      });
    });

    it('cannot show a URL sealed under another secret (404), while that URL keeps working until replaced', async () => {
      const made = await newFeed();
      const rotated = buildEventsApp({ knex: db.knex, clock, access, tokenSecret: 'a rotated secret' }).app;
      expect((await request(rotated).get(feedPath()).set('X-Test-User', owner).expect(404)).body.code).to.equal('not_found');
      await request(rotated).get(pathOf(made.url)).expect(200);
    });
  });

  describe('DELETE …/calendar-feed', () => {
    it('answers 204 and the URL stops working at once; GET then answers 404; a second DELETE is 204 too', async () => {
      const made = await newFeed();
      await as(adult).del(feedPath()).expect(204);
      expect((await request(app).get(pathOf(made.url)).expect(404)).body.code).to.equal('not_found');
      await as(owner).get(feedPath()).expect(404);
      await as(owner).del(feedPath()).expect(204);
    });

    it('answers 403 to a Junior and 404 to a non-member, and the feed stays', async () => {
      const made = await newFeed();
      expect((await as(junior).del(feedPath()).expect(403)).body.code).to.equal('forbidden');
      expect((await as(stranger).del(feedPath()).expect(404)).body.code).to.equal('not_found');
      expect((await request(app).delete(feedPath()).expect(401)).body.code).to.equal('unauthenticated');
      await request(app).get(pathOf(made.url)).expect(200);
    });
  });

  describe('GET /calendar/{token}.ics', () => {
    it('answers text/calendar without any sign-in, with a VTIMEZONE of the household zone and CRLF line ends', async () => {
      const made = await newFeed();
      const e = await addEvent({
        notes: 'Grandparents visit\nBring the good plates',
        participants: [
          { memberId: ada, name: 'Ada' },
          { memberId: null, name: 'Grandma' },
        ],
      });
      const res = await request(app).get(pathOf(made.url)).expect(200);
      expect(res.headers['content-type']).to.equal('text/calendar; charset=utf-8');
      expect(res.headers['set-cookie']).to.equal(undefined);
      expect(res.headers['cache-control']).to.equal('private, no-cache');
      expect(res.text).to.match(/^BEGIN:VCALENDAR\r\nVERSION:2\.0\r\n/);
      expect(res.text.endsWith('END:VCALENDAR\r\n')).to.equal(true);
      expect(res.text.replace(/\r\n/g, '')).to.not.match(/[\r\n]/); // no bare CR or LF anywhere
      expect(propertiesAfterComponents(res.text)).to.deep.equal([]);
      const feed = parseFeed(res.text);
      expect(feed.zones).to.deep.equal(['Europe/Oslo']);
      expect(feed.events).to.deep.equal([
        {
          uid: `${e.id}@meals.example.com`,
          summary: 'Guests: Grandparents visit',
          description: 'Ada, Grandma',
          sequence: 0,
          local: '2026-11-28T18:00:00',
          tzid: 'Europe/Oslo',
          utc: '2026-11-28T17:00:00.000Z',
          duration: 'PT1H',
          lastModified: '2026-11-22T09:00:00Z',
          stamp: '2026-11-22T09:00:00Z',
        },
      ]);
      expect(rawLines(res.text)).to.include('DTSTART;TZID=Europe/Oslo:20261128T180000');
      expect(rawLines(res.text)).to.include('DURATION:PT1H');
      expect(rawLines(res.text)).to.include('LAST-MODIFIED:20261122T090000Z');
    });

    it('writes the summary as the event type alone when there are no notes, and no DESCRIPTION without participants', async () => {
      const made = await newFeed();
      await addEvent({ eventType: 'EatingOut', notes: '' });
      const res = await request(app).get(pathOf(made.url)).expect(200);
      const [only] = parseFeed(res.text).events;
      expect(only!.summary).to.equal('EatingOut');
      expect(res.text).to.not.include('DESCRIPTION');
    });

    it('Europe/Oslo: 18:00 stays 18:00 local on both sides of each daylight-saving change (16:00Z in summer, 17:00Z in winter)', async () => {
      const made = await newFeed();
      for (const date of ['2026-10-24', '2026-10-26', '2027-03-27', '2027-03-29']) await addEvent({ date });
      const feed = parseFeed((await request(app).get(pathOf(made.url)).expect(200)).text);
      expect(feed.events.map((e) => [e.local, e.tzid, e.utc])).to.deep.equal([
        ['2026-10-24T18:00:00', 'Europe/Oslo', '2026-10-24T16:00:00.000Z'],
        ['2026-10-26T18:00:00', 'Europe/Oslo', '2026-10-26T17:00:00.000Z'],
        ['2027-03-27T18:00:00', 'Europe/Oslo', '2027-03-27T17:00:00.000Z'],
        ['2027-03-29T18:00:00', 'Europe/Oslo', '2027-03-29T16:00:00.000Z'],
      ]);
    });

    it('America/New_York: 17:30 stays 17:30 local across its changes (21:30Z in summer time, 22:30Z in standard time)', async () => {
      const made = await newFeed(newYork);
      for (const date of ['2026-10-31', '2026-11-02', '2027-03-13', '2027-03-15']) await addEvent({ date, servingTime: '17:30' }, newYork);
      const res = await request(app).get(pathOf(made.url)).expect(200);
      const feed = parseFeed(res.text);
      expect(feed.zones).to.deep.equal(['America/New_York']);
      expect(feed.events.map((e) => [e.local, e.tzid, e.utc])).to.deep.equal([
        ['2026-10-31T17:30:00', 'America/New_York', '2026-10-31T21:30:00.000Z'],
        ['2026-11-02T17:30:00', 'America/New_York', '2026-11-02T22:30:00.000Z'],
        ['2027-03-13T17:30:00', 'America/New_York', '2027-03-13T22:30:00.000Z'],
        ['2027-03-15T17:30:00', 'America/New_York', '2027-03-15T21:30:00.000Z'],
      ]);
      expect(rawLines(res.text)).to.include('DTSTART;TZID=America/New_York:20261031T173000');
    });

    for (const [zone, household, summer, winter] of [
      ['Europe/Oslo', () => oslo, '15:00:00.000Z', '16:00:00.000Z'],
      ['America/New_York', () => newYork, '21:00:00.000Z', '22:00:00.000Z'],
    ] as const) {
      it(`${zone}: a weekly series at 17:00 reads the same in two iCalendar parsers (ical.js, node-ical) as in the API's list, 17:00 local on both sides of DST`, async () => {
        const h = household();
        const made = await newFeed(h);
        const first = await addEvent(
          { date: '2027-03-02', servingTime: '17:00', notes: 'Football', repeat: { frequency: 'weekly', byDay: ['Tue'], count: 6 } },
          h,
        );
        const listed = (
          await as(owner)
            .get(`${eventsPath(h)}?limit=100`)
            .expect(200)
        ).body.items as { id: string; date: string; servingTime: string; seriesId: string }[];
        expect(listed.map((e) => e.date)).to.deep.equal(['2027-03-02', '2027-03-09', '2027-03-16', '2027-03-23', '2027-03-30', '2027-04-06']);
        expect(listed.every((e) => e.seriesId === first.seriesId && e.servingTime === '17:00')).to.equal(true);
        const text = (await request(app).get(pathOf(made.url)).expect(200)).text;
        const byIcalJs = parseFeed(text).events.map((e) => ({ uid: e.uid, local: e.local, utc: e.utc }));
        const parsed = nodeIcal.sync.parseICS(text);
        const byNodeIcal = Object.values(parsed)
          .filter((c) => c?.type === 'VEVENT')
          .map((c) => {
            const v = c as nodeIcal.VEvent;
            return { uid: v.uid, tz: (v.start as Date & { tz?: string }).tz, utc: (v.start as Date).toISOString() };
          });
        const host = 'meals.example.com';
        expect(byIcalJs.map((e) => e.uid)).to.deep.equal(listed.map((e) => `${e.id}@${host}`));
        expect(byNodeIcal.map((e) => e.uid)).to.deep.equal(listed.map((e) => `${e.id}@${host}`));
        expect(byIcalJs.map((e) => e.local)).to.deep.equal(listed.map((e) => `${e.date}T17:00:00`));
        expect(byNodeIcal.map((e) => e.utc)).to.deep.equal(byIcalJs.map((e) => e.utc));
        expect(byNodeIcal.every((e) => e.tz === zone)).to.equal(true);
        // The UTC instants move with DST (New York changes on 14 March, Oslo on 28 March); the local time does not.
        const expected = zone === 'Europe/Oslo' ? [winter, winter, winter, winter, summer, summer] : [winter, winter, summer, summer, summer, summer];
        expect(byIcalJs.map((e) => e.utc.slice(11))).to.deep.equal(expected);
      });
    }

    it("holds the events from 31 days before to 366 days after today, today being the household's date", async () => {
      // 23:30Z on 22 November is already 23 November in Oslo, and still 22 November in New York.
      clock.set('2026-11-22T23:30:00.000Z');
      const osloFeed = await newFeed(oslo);
      const nyFeed = await newFeed(newYork);
      for (const date of ['2026-10-22', '2026-10-23', '2027-11-24', '2027-11-25']) await addEvent({ date, notes: date });
      for (const date of ['2026-10-21', '2026-10-22', '2027-11-23', '2027-11-24']) await addEvent({ date, notes: date }, newYork);
      const inOslo = parseFeed((await request(app).get(pathOf(osloFeed.url)).expect(200)).text).events.map((e) => e.summary);
      expect(inOslo).to.deep.equal(['Guests: 2026-10-23', 'Guests: 2027-11-24']);
      const inNewYork = parseFeed((await request(app).get(pathOf(nyFeed.url)).expect(200)).text).events.map((e) => e.summary);
      expect(inNewYork).to.deep.equal(['Guests: 2026-10-22', 'Guests: 2027-11-23']);
    });

    it('shows only its own household, in list order', async () => {
      const made = await newFeed();
      await addEvent({ date: '2026-12-01', servingTime: '19:00', notes: 'b' });
      await addEvent({ date: '2026-12-01', servingTime: '12:00', notes: 'a' });
      await addEvent({ date: '2026-11-30', notes: 'first' });
      await addEvent({ notes: 'not ours' }, newYork);
      const summaries = parseFeed((await request(app).get(pathOf(made.url)).expect(200)).text).events.map((e) => e.summary);
      expect(summaries).to.deep.equal(['Guests: first', 'Guests: a', 'Guests: b']);
    });

    it('bumps SEQUENCE and LAST-MODIFIED on every change, keeps the UID, and drops a deleted event', async () => {
      const made = await newFeed();
      const e = await addEvent();
      clock.advance(60_000);
      await as(owner)
        .put(`${eventsPath()}/${e.id}`, event({ servingTime: '19:00' }))
        .expect(200);
      clock.advance(60_000);
      await as(owner)
        .put(`${eventsPath()}/${e.id}`, event({ servingTime: '19:30' }))
        .expect(200);
      let [only] = parseFeed((await request(app).get(pathOf(made.url)).expect(200)).text).events;
      expect(only).to.include({ uid: `${e.id}@meals.example.com`, sequence: 2, local: '2026-11-28T19:30:00', lastModified: '2026-11-22T09:02:00Z' });
      // Parallel replacements each count.
      await Promise.all(Array.from({ length: 5 }, () => as(owner).put(`${eventsPath()}/${e.id}`, event()).expect(200)));
      [only] = parseFeed((await request(app).get(pathOf(made.url)).expect(200)).text).events;
      expect(only!.sequence).to.equal(7);
      await as(owner).del(`${eventsPath()}/${e.id}`).expect(204);
      expect(parseFeed((await request(app).get(pathOf(made.url)).expect(200)).text).events).to.deep.equal([]);
    });

    it('folds every line at 75 octets without splitting a character, and unfolds to the exact text', async () => {
      const made = await newFeed();
      const notes = `Middag med bestemor og bestefar 🍲 — rømmegrøt, spekemat og ${'æøå'.repeat(30)} til dessert`;
      await addEvent({ notes, participants: Array.from({ length: 12 }, (_, i) => ({ memberId: null, name: `Gjest nummer ${i + 1} (Ærlige Åse)` })) });
      const res = await request(app).get(pathOf(made.url)).expect(200);
      const lines = rawLines(res.text).slice(0, -1);
      expect(lines.some((l) => l.startsWith(' '))).to.equal(true);
      for (const line of lines) {
        expect(Buffer.byteLength(line, 'utf8'), line).to.be.at.most(75);
        expect(line).to.not.include('\uFFFD');
      }
      const [only] = parseFeed(res.text).events;
      expect(only!.summary).to.equal(`Guests: ${notes}`);
      expect(only!.description).to.equal(Array.from({ length: 12 }, (_, i) => `Gjest nummer ${i + 1} (Ærlige Åse)`).join(', '));
    });

    it('answers 304 with no body to If-None-Match of the current ETag, and 200 again once something changed', async () => {
      const made = await newFeed();
      const e = await addEvent();
      const first = await request(app).get(pathOf(made.url)).expect(200);
      const etag = first.headers.etag as string;
      expect(etag).to.match(/^W\/"[A-Za-z0-9_-]{43}"$/);
      // A later request for the same events gives the same bytes (nothing in the feed is the time of the request).
      clock.advance(3_600_000);
      const again = await request(app).get(pathOf(made.url)).expect(200);
      expect(again.headers.etag).to.equal(etag);
      expect(again.text).to.equal(first.text);
      const notModified = await request(app).get(pathOf(made.url)).set('If-None-Match', etag).expect(304);
      expect(notModified.text).to.equal('');
      expect(notModified.headers.etag).to.equal(etag);
      // The 304 reads the feed and the household's events version, not the events; an unchanged feed is rendered once.
      expect(notModified.headers['server-timing']).to.include('db;dur=').and.include('desc="2 queries"');
      expect(notModified.headers['server-timing']).to.not.include('render-ics');
      expect((await request(app).get(pathOf(made.url)).expect(200)).headers['server-timing']).to.include('desc="2 queries"');
      await request(app).get(pathOf(made.url)).set('If-None-Match', `"other", ${etag}`).expect(304);
      // If-None-Match compares weakly: the same opaque tag without W/ matches too.
      await request(app).get(pathOf(made.url)).set('If-None-Match', etag.slice(2)).expect(304);
      await request(app).get(pathOf(made.url)).set('If-None-Match', '"other"').expect(200);
      // If-None-Match decides even next to an If-Modified-Since.
      await request(app).get(pathOf(made.url)).set('If-None-Match', etag).set('If-Modified-Since', 'Sun, 01 Jan 2026 00:00:00 GMT').expect(304);
      await as(owner)
        .put(`${eventsPath()}/${e.id}`, event({ notes: 'changed' }))
        .expect(200);
      const changed = await request(app).get(pathOf(made.url)).set('If-None-Match', etag).expect(200);
      expect(changed.headers.etag).to.not.equal(etag);
      expect(parseFeed(changed.text).events[0]!.summary).to.equal('Guests: changed');
      // A new event gives a new ETag; deleting it again too (the household's events version never repeats); a new day (the window moves) a new one.
      const added = await addEvent({ date: '2026-12-24' });
      const withAdded = await request(app).get(pathOf(made.url)).set('If-None-Match', String(changed.headers.etag)).expect(200);
      expect(parseFeed(withAdded.text).events).to.have.length(2);
      expect([etag, changed.headers.etag]).to.not.include(withAdded.headers.etag);
      await as(owner).del(`${eventsPath()}/${added.id}`).expect(204);
      await request(app).get(pathOf(made.url)).set('If-None-Match', String(withAdded.headers.etag)).expect(200);
      const afterDelete = await request(app).get(pathOf(made.url)).set('If-None-Match', String(changed.headers.etag)).expect(200);
      expect(parseFeed(afterDelete.text).events).to.have.length(1);
      await request(app).get(pathOf(made.url)).set('If-None-Match', String(afterDelete.headers.etag)).expect(304);
      clock.advance(86_400_000);
      const nextDay = await request(app).get(pathOf(made.url)).set('If-None-Match', String(afterDelete.headers.etag)).expect(200);
      expect(parseFeed(nextDay.text).events).to.have.length(1);
    });

    it('answers 404 not_found for an unknown token, a malformed one, and a retired one', async () => {
      const made = await newFeed();
      const unknown = Buffer.alloc(32, 7).toString('base64url');
      // The real token with its last character changed (to one it is not: a fixed 'A' would be the
      // same token whenever the random token ends in 'A').
      const real = pathOf(made.url);
      const altered = `${real.slice(0, -5)}${real.at(-5) === 'A' ? 'B' : 'A'}.ics`;
      for (const path of [`/calendar/${unknown}.ics`, '/calendar/short.ics', `/calendar/${'x'.repeat(300)}.ics`, altered]) {
        const res = await request(app).get(path).expect(404);
        expect(res.body.code).to.equal('not_found');
      }
      await newFeed();
      await request(app).get(pathOf(made.url)).expect(404);
    });

    it('is rate-limited per client IP: parallel requests beyond the limit get 429 with Retry-After and RateLimit headers', async () => {
      const limited = buildEventsApp({
        knex: db.knex,
        clock,
        access,
        calendarLimits: calendarFeedLimits({ perIp: { points: 3, durationSeconds: 60 }, perToken: { points: 100, durationSeconds: 60 } }),
      }).app;
      const guesses = Array.from({ length: 7 }, () => request(limited).get(`/calendar/${Buffer.alloc(32, Math.random() * 255).toString('base64url')}.ics`));
      const answers = await Promise.all(guesses);
      expect(answers.filter((r) => r.status === 404)).to.have.length(3);
      const refused = answers.filter((r) => r.status === 429);
      expect(refused).to.have.length(4);
      for (const r of refused) {
        expect(r.body.code).to.equal('rate_limited');
        expect(Number(r.headers['retry-after'])).to.be.within(1, 60);
        expect(r.headers['ratelimit-policy']).to.equal('"calendar-feed-ip";q=3;w=60');
      }
    });

    it('is rate-limited per token, whatever the IP', async () => {
      const limited = buildEventsApp({
        knex: db.knex,
        clock,
        access,
        trustProxy: true,
        calendarLimits: calendarFeedLimits({ perIp: { points: 100, durationSeconds: 60 }, perToken: { points: 3, durationSeconds: 60 } }),
      }).app;
      const made = (await request(limited).post(feedPath()).set('X-Test-User', owner).expect(201)).body;
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          request(limited)
            .get(pathOf(made.url))
            .set('X-Forwarded-For', `203.0.113.${i + 1}`),
        ),
      );
      const ok = answers.filter((r) => r.status === 200);
      expect(ok).to.have.length(3);
      expect(answers.filter((r) => r.status === 429)).to.have.length(3);
      for (const r of ok) {
        expect(r.headers['ratelimit-policy']).to.equal('"calendar-feed-ip";q=100;w=60, "calendar-feed-token";q=3;w=60');
        expect(r.headers.ratelimit).to.match(/^"calendar-feed-ip";r=99;t=\d+, "calendar-feed-token";r=[0-2];t=\d+$/);
      }
      // Another token is not held back by this one's limit.
      const other = (await request(limited).post(feedPath(newYork)).set('X-Test-User', owner).expect(201)).body;
      await request(limited).get(pathOf(other.url)).set('X-Forwarded-For', '203.0.113.1').expect(200);
    });
  });

  it('shares the per-token limit across instances through Redis: parallel requests to two instances get exactly the limit', async function () {
    const redis = await connectTestRedis();
    if (!redis) return this.skip();
    try {
      const namespace = `test-${randomUUID()}:`;
      const limits = () => calendarFeedLimits({ redis, namespace, perIp: { points: 100, durationSeconds: 60 }, perToken: { points: 4, durationSeconds: 60 } });
      const one = buildEventsApp({ knex: db.knex, clock, access, calendarLimits: limits() }).app;
      const two = buildEventsApp({ knex: db.knex, clock, access, calendarLimits: limits() }).app;
      const made = await newFeed();
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => request(i % 2 ? one : two).get(pathOf(made.url))));
      expect(answers.filter((r) => r.status === 200)).to.have.length(4);
      expect(answers.filter((r) => r.status === 429)).to.have.length(6);
    } finally {
      redis.disconnect();
    }
  });

  it('never writes the feed URL or its token to the request log (200, 304 and 404 alike)', async () => {
    const lines: string[] = [];
    const record = (obj: unknown, msg?: string) => lines.push(JSON.stringify([obj, msg]));
    const logger = { info: record, warn: record, error: record, debug: record, child: () => logger, isLevelEnabled: () => true } as unknown as Logger;
    const { service, calendar } = buildEventsApp({ knex: db.knex, clock, access });
    const logged = createHttpApp({ logger, allowedOrigins: ['http://localhost:8080'], routers: [createRouter({ service, calendar })] });
    const made = await newFeed();
    const token = /calendar\/([^.]+)\.ics$/.exec(made.url)![1]!;
    const ok = await request(logged).get(pathOf(made.url)).expect(200);
    await request(logged).get(pathOf(made.url)).set('If-None-Match', String(ok.headers.etag)).expect(304);
    await request(logged)
      .get(`/calendar/${token.slice(1)}x.ics`)
      .expect(404);
    expect(lines).to.have.length(3);
    for (const line of lines) {
      expect(line).to.include('GET /calendar/{token}.ics');
      expect(line).to.not.include(token);
      expect(line).to.not.include(token.slice(1));
    }
  });

  it('documents the four calendar operations and the single-event GET in the OpenAPI document', () => {
    const { calendar, service } = buildEventsApp({ knex: db.knex, clock, access });
    const doc = buildOpenApiDocument({ title: 't', version: '1' }, createRouter({ service, calendar }).operations) as {
      paths: Record<string, Record<string, { operationId: string; security: unknown[]; responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    expect(doc.paths['/api/v1/households/{householdId}/calendar-feed']).to.have.keys('post', 'get', 'delete');
    const ics = doc.paths['/calendar/{token}.ics']!.get!;
    expect(ics.operationId).to.equal('getCalendarFeedIcs');
    expect(ics.security).to.deep.equal([]);
    expect(ics.responses['200']!.content).to.have.key('text/calendar; charset=utf-8');
    expect(ics.responses).to.include.keys('304', '404', '429');
    expect(doc.paths['/api/v1/households/{householdId}/events/{eventId}']).to.include.keys('get', 'put', 'delete');
  });
});
