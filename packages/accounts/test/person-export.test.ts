import { expect } from 'chai';
import request from 'supertest';
import { createWorld, login, mailsTo, PASSWORD, signedUp, type World } from './helpers.js';

const HH_A = '11111111-1111-4111-8111-111111111111';
const HH_B = '22222222-2222-4222-8222-222222222222';

/** Reads a response body as text however it is typed (the export is a download). */
function asText(res: request.Response): string {
  return Buffer.isBuffer(res.body) ? res.body.toString('utf8') : res.text;
}

function download(agent: request.Agent): request.Test {
  return agent
    .get('/api/v1/me/export')
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
}

describe('a person’s data: GET /me/export', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  beforeEach(async () => w.reset());
  after(async () => w?.close());

  async function world() {
    const ada = await signedUp(w, 'ada@example.test', PASSWORD, 'Ada');
    w.clock.advance(60_000);
    const phone = request.agent(w.app);
    await login(phone, 'ada@example.test').set('User-Agent', 'PhoneApp/2.0');
    await w.db.knex('account_identities').insert({
      accountId: ada.userId,
      provider: 'google',
      subject: 'google-sub-ada',
      email: 'ada@gmail.test',
      emailVerified: true,
      createdAt: '2026-11-22T09:00:30.000Z',
    });
    await w.personal.addDevice(ada.userId, 'device-token-1');
    w.memberships.set(ada.userId, [
      { householdId: HH_A, householdName: 'Home', role: 'Owner', memberId: 'aaaaaaaa-0000-4000-8000-000000000001' },
      { householdId: HH_B, householdName: 'Cabin', role: 'Adult', memberId: 'bbbbbbbb-0000-4000-8000-000000000002' },
    ]);
    const events = (hh: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${hh}-e${i}`, householdId: hh, notes: `event ${i}` }));
    w.personal.households.set(HH_A, {
      household: { id: HH_A, name: 'Home', timeZoneId: 'Europe/Oslo' },
      members: [{ memberId: 'aaaaaaaa-0000-4000-8000-000000000001', displayName: 'Ada', role: 'Owner', userId: ada.userId }],
      rules: [{ id: 'rule-1', payload: { kind: 'CategoryFrequency' } }],
      eventPages: [events(HH_A, 3), events(HH_A, 2).map((e) => ({ ...e, id: `${e.id}-p2` }))],
    });
    w.personal.households.set(HH_B, {
      household: { id: HH_B, name: 'Cabin', timeZoneId: 'Europe/Oslo' },
      members: [
        { memberId: 'bbbbbbbb-0000-4000-8000-000000000001', displayName: 'Bob', role: 'Owner', userId: null },
        { memberId: 'bbbbbbbb-0000-4000-8000-000000000002', displayName: 'Ada', role: 'Adult', userId: ada.userId },
      ],
      rules: [],
      eventPages: [[], events(HH_B, 1)],
    });
    return { ...ada, phone };
  }

  it('answers the whole document as an attachment, and it matches what was created', async () => {
    const ada = await world();
    // The inbox, page by page as push yields it (an empty page in between is skipped).
    const inboxItems = [1, 2, 3].map((n) => ({ id: `n${n}`, kind: 'reminders', title: `t${n}`, body: 'b', data: {}, readAt: null }));
    w.personal.inbox.set(ada.userId, [inboxItems.slice(0, 2), [], inboxItems.slice(2)]);
    await w.deliver();
    w.smtp.clear();
    w.clock.advance(1000);
    const res = await download(ada.agent);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).to.equal('attachment; filename="meal-planner-data-2026-11-22.json"');
    expect(res.headers['cache-control']).to.equal('no-store');
    const text = asText(res);
    const doc = JSON.parse(text);
    expect(Object.keys(doc)).to.deep.equal(['exportedAt', 'account', 'identities', 'sessions', 'memberships', 'devices', 'notifications', 'households']);
    expect(doc.exportedAt).to.equal('2026-11-22T09:01:01.000Z');
    expect(doc.account).to.deep.equal({
      id: ada.userId,
      email: 'ada@example.test',
      displayName: 'Ada',
      emailConfirmed: false,
      hasPassword: true,
      createdAt: '2026-11-22T09:00:00.000Z',
      updatedAt: '2026-11-22T09:00:00.000Z',
    });
    expect(doc.identities).to.deep.equal([{ provider: 'google', email: 'ada@gmail.test', linkedAt: '2026-11-22T09:00:30.000Z' }]);
    expect(doc.sessions.map((s: { method: string; userAgent: string | null; current: boolean }) => [s.method, s.userAgent, s.current])).to.deep.equal([
      ['password', 'PhoneApp/2.0', false],
      ['password', null, true],
    ]);
    expect(doc.memberships).to.deep.equal(w.memberships.get(ada.userId));
    expect(doc.devices).to.deep.equal([{ token: 'device-token-1', platform: 'ios' }]);
    expect(doc.notifications).to.deep.equal(inboxItems);
    const a = w.personal.households.get(HH_A)!;
    const b = w.personal.households.get(HH_B)!;
    expect(doc.households).to.deep.equal([
      { household: a.household, members: a.members, rules: a.rules, events: a.eventPages.flat() },
      { household: b.household, members: b.members, rules: [], events: b.eventPages.flat() },
    ]);
    // No hash, stamp or session id anywhere in it.
    const secrets = await w.db.knex('accounts').select('passwordHash', 'securityStamp').where({ id: ada.userId }).first();
    const sids = (await w.db.knex('account_sessions').select('sid')).map((r: { sid: string }) => r.sid);
    for (const secret of [secrets.passwordHash, secrets.securityStamp, ...sids]) expect(text).to.not.include(secret);
    expect(text).to.not.match(/passwordHash|securityStamp|password_hash/);

    // One household at a time: the next household is read only once the previous one's events are written.
    expect(w.personal.reads).to.deep.equal([
      `household ${HH_A}`,
      `rules ${HH_A}`,
      `events ${HH_A} page 0`,
      `events ${HH_A} page 1`,
      `household ${HH_B}`,
      `rules ${HH_B}`,
      `events ${HH_B} page 0`,
      `events ${HH_B} page 1`,
    ]);

    // Without `eventPages` the records of `events` are written: the same bytes as the JSON text written through.
    const { eventPages } = w.personal.sources;
    delete w.personal.sources.eventPages;
    try {
      w.clock.advance(60_000);
      const fromRecords = asText(await download(ada.agent));
      expect(fromRecords.slice(fromRecords.indexOf(',"households":'))).to.equal(text.slice(text.indexOf(',"households":')));
    } finally {
      w.personal.sources.eventPages = eventPages;
    }

    await w.deliver();
    const [notice, ...more] = mailsTo(w, 'ada@example.test');
    expect(more.map((m) => m.subject)).to.deep.equal(['A copy of your data was downloaded']);
    expect(notice!.subject).to.equal('A copy of your data was downloaded');
    expect(notice!.text).to.not.match(/token=/);
  });

  it('streams: pieces of the document reach the client while later households are still being read', async () => {
    const ada = await world();
    const seen: string[] = [];
    // Holds page 1 of the first household until the client has received what came before it.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const original = w.personal.sources.events;
    w.personal.sources.events = (householdId) =>
      (async function* () {
        for await (const page of original(householdId)) {
          if (householdId === HH_A && seen.length === 0) {
            seen.push('waiting');
            yield page;
            await held;
            continue;
          }
          yield page;
        }
      })();
    try {
      const received: string[] = [];
      const done = new Promise<string>((resolve, reject) => {
        ada.agent
          .get('/api/v1/me/export')
          .buffer(false)
          .parse((res, cb) => {
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              received.push(chunk);
              if (received.join('').includes(`"id":"${HH_A}-e2"`)) release();
            });
            res.on('end', () => cb(null, received.join('')));
          })
          .end((err, res) => (err ? reject(err) : resolve(res.body as string)));
      });
      const text = await done;
      // The first page reached the client before the rest existed (else `release` never fired and this hung).
      expect(received.length).to.be.greaterThan(1);
      expect(JSON.parse(text).households).to.have.length(2);
    } finally {
      w.personal.sources.events = original;
    }
  });

  it('leaves out a household that went away after the memberships were read', async () => {
    const ada = await world();
    w.personal.households.delete(HH_A);
    const res = await download(ada.agent);
    expect(res.status).to.equal(200);
    expect(JSON.parse(asText(res)).households.map((h: { household: { id: string } }) => h.household.id)).to.deep.equal([HH_B]);
  });

  it('one export a minute per account, on every instance: 429 rate_limited with Retry-After', async () => {
    const ada = await world();
    expect((await download(ada.agent)).status).to.equal(200);
    w.clock.advance(20_000);
    const again = await ada.agent.get('/api/v1/me/export');
    expect(again.status).to.equal(429);
    expect(again.body.code).to.equal('rate_limited');
    expect(again.headers['retry-after']).to.equal('40');
    // Another instance, another session of the same account: the same limit.
    const elsewhere = request.agent(w.another().app);
    await login(elsewhere, 'ada@example.test');
    expect((await elsewhere.get('/api/v1/me/export')).status).to.equal(429);
    // Someone else is not limited by it.
    const bob = await signedUp(w, 'bob@example.test');
    expect((await download(bob.agent)).status).to.equal(200);
    w.clock.advance(40_000);
    expect((await download(elsewhere)).status).to.equal(200);
  });

  it('parallel exports: exactly one is answered, the others get 429', async () => {
    const ada = await world();
    const answers = await Promise.all(Array.from({ length: 5 }, () => download(ada.agent)));
    expect(answers.map((r) => r.status).sort()).to.deep.equal([200, 429, 429, 429, 429]);
    await w.deliver();
    expect(mailsTo(w, 'ada@example.test', /copy of your data/)).to.have.length(1);
  });

  it('a failure half-way cuts the connection rather than answering a partial document as complete', async () => {
    const ada = await world();
    const original = w.personal.sources.rules;
    w.personal.sources.rules = async (householdId) => {
      if (householdId === HH_B) throw new Error('rules unavailable');
      return original(householdId);
    };
    try {
      const outcome = await download(ada.agent).then(
        (res) => ({
          status: res.status,
          parsed: (() => {
            try {
              JSON.parse(asText(res));
              return true;
            } catch {
              return false;
            }
          })(),
        }),
        (err: Error) => ({ error: err.message }),
      );
      // Either the client saw the connection cut, or what arrived is not a whole JSON document.
      if ('status' in outcome) expect(outcome.parsed).to.equal(false);
      else expect(outcome.error).to.be.a('string');
    } finally {
      w.personal.sources.rules = original;
    }
  });

  it('needs a session (401)', async () => {
    const res = await request(w.app).get('/api/v1/me/export');
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('unauthenticated');
  });
});
