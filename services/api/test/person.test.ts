/**
 * A person's own account across the composed service: deleting it leaves nothing of the person in
 * any package's table and touches nobody else's rows; the export carries every package's data.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

const PASSWORD = 'correct horse battery';

type Dump = Record<string, unknown[]>;

/** Every row of every table (but the migration history), in a stable order. */
async function dump(knex: Knex): Promise<Dump> {
  const tables: string[] = (await knex('pg_tables').select('tablename').where('schemaname', 'public'))
    .map((r: { tablename: string }) => r.tablename)
    .filter((t: string) => !t.startsWith('knex_migrations'))
    .sort();
  const out: Dump = {};
  for (const table of tables) {
    const { rows } = await knex.raw(`select to_jsonb(t)::text as row from "${table}" t order by 1`);
    out[table] = rows.map((r: { row: string }) => r.row);
  }
  return out;
}

const counts = (d: Dump) => Object.fromEntries(Object.entries(d).map(([t, rows]) => [t, rows.length]));
const FEED = ['household_changes', 'household_change_counters'];

/**
 * Every table holds as many rows as before the person came, but one more mail; the changes feed of
 * the household they were a member of keeps that a member left (deletions are kept 90 days: an app
 * that syncs must learn it), which holds the membership's id and nothing of the person. Their own
 * household's feed is gone with it.
 */
function expectCountsAsBefore(before: Dump, after: Dump, householdLeft: string): void {
  const added = after.household_changes!.filter((r) => !before.household_changes!.includes(r)).map((r) => JSON.parse(String(r)));
  expect(added.map((r) => [r.household_id, r.resource, r.change])).to.deep.equal([[householdLeft, 'member', 'delete']]);
  expect(after.household_change_counters!.map((r) => JSON.parse(String(r)).household_id)).to.have.members(
    before.household_change_counters!.map((r) => JSON.parse(String(r)).household_id),
  );
  const withoutFeed = (c: Record<string, number>) => Object.fromEntries(Object.entries(c).filter(([t]) => !FEED.includes(t)));
  expect(withoutFeed(counts(after))).to.deep.equal(withoutFeed({ ...counts(before), mail_outbox: before.mail_outbox!.length + 1 }));
}

describe('a person’s account across the whole service', function () {
  this.timeout(60_000);
  let h: Harness;

  beforeEach(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000' });
  });
  afterEach(async () => h?.close());

  async function household(agent: request.Agent, name: string): Promise<string> {
    const res = await agent.post('/api/v1/households').send({ name, timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const id = res.body.id as string;
    const rule = await agent.post(`/api/v1/households/${id}/rules`).send({
      payload: { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 1, maximumPerWeek: 2 },
      strength: 'Hard',
      scope: 'Permanent',
      startDate: null,
      endDate: null,
    });
    expect(rule.status, JSON.stringify(rule.body)).to.equal(201);
    for (const date of ['2026-12-01', '2026-12-02', '2026-12-03']) {
      const event = await agent
        .post(`/api/v1/households/${id}/events`)
        .send({ date, eventType: 'Guests', servingTime: '18:00', availableCookingMinutes: 30, notes: `${name} ${date}`, participants: [] });
      expect(event.status, JSON.stringify(event.body)).to.equal(201);
    }
    return id;
  }

  async function invite(agent: request.Agent, householdId: string): Promise<string> {
    const res = await agent.post(`/api/v1/households/${householdId}/invitations`).send({ role: 'Adult' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.code as string;
  }

  async function device(agent: request.Agent, token: string) {
    expect((await agent.put('/api/v1/me/devices').send({ token, platform: 'ios' })).status).to.equal(200);
  }

  /** Bob owns a household (rules, events, an open invitation) and a phone; Carol has her own. */
  async function others() {
    const bob = await signUp(h.app, 'bob@example.test', 'Bob', PASSWORD);
    const bobsHome = await household(bob, 'Bob home');
    const code = await invite(bob, bobsHome);
    await device(bob, 'bob-phone');
    const carol = await signUp(h.app, 'carol@example.test', 'Carol', PASSWORD);
    await household(carol, 'Carol home');
    await device(carol, 'carol-phone');
    return { bob, bobsHome, code, carol };
  }

  /** Ada: a member of Bob's household, the only member of her own, a phone, a second session, an export, a login failure. */
  async function ada(code: string) {
    const agent = await signUp(h.app, 'ada@example.test', 'Ada', PASSWORD);
    const joined = await agent.post('/api/v1/invitations/accept').send({ code });
    expect(joined.status, JSON.stringify(joined.body)).to.equal(200);
    const own = await household(agent, 'Ada home');
    await invite(agent, own);
    // A write with an Idempotency-Key: its kept answer (her account, address included) is her data too.
    const keyed = await agent.patch('/api/v1/me').set('Idempotency-Key', 'ada-retry-safe').send({ displayName: 'Ada' });
    expect(keyed.status, JSON.stringify(keyed.body)).to.equal(200);
    await device(agent, 'ada-phone');
    const laptop = request.agent(h.app);
    expect((await laptop.post('/api/v1/auth/login').send({ email: 'ada@example.test', password: PASSWORD })).status).to.equal(200);
    expect((await request(h.app).post('/api/v1/auth/login').send({ email: 'ada@example.test', password: 'wrong password' })).status).to.equal(401);
    h.clock.advance(60_000);
    expect((await agent.get('/api/v1/me/export')).status).to.equal(200);
    return { agent, laptop, own };
  }

  it('deleting an account leaves every table as it was before the person came, but the notice mail', async () => {
    const { bob, bobsHome, carol, code } = await others();
    // The invitation Ada will accept is Bob's data: it stays, only its acceptance changes.
    const before = await dump(h.db.knex);
    const person = await ada(code);
    const during = await dump(h.db.knex);
    for (const table of [
      'accounts',
      'account_sessions',
      'household_members',
      'households',
      'meal_rules',
      'meal_events',
      'push_devices',
      'account_exports',
      'idempotency_keys',
    ])
      expect(during[table]!.length, table).to.be.greaterThan(before[table]!.length);

    const res = await person.agent.delete('/api/v1/me').send({ password: PASSWORD });
    expect(res.status, JSON.stringify(res.body)).to.equal(204);

    const after = await dump(h.db.knex);
    expectCountsAsBefore(before, after, bobsHome);
    for (const table of Object.keys(before)) {
      if (table === 'mail_outbox' || table === 'household_invitations' || FEED.includes(table)) continue;
      // The per-IP count of unasked mail counts requests from a network address, not a person's
      // data: only the per-recipient rows are compared (Ada's must be gone, the others untouched).
      const personal = (rows: unknown[]) => (table === 'unasked_mail_counts' ? rows.filter((r) => !String(r).includes('"ip:')) : rows);
      expect(personal(after[table]!), table).to.deep.equal(personal(before[table]!));
    }
    // The accepted invitation is Bob's and stays; it no longer points at Ada's membership.
    const invitation = await h.db.knex('householdInvitations').where({ householdId: bobsHome }).first();
    expect(invitation.memberId).to.equal(null);
    const outbox = await h.db.knex('mailOutbox').select('recipient', 'kind');
    expect(outbox.filter((m: { recipient: string }) => m.recipient === 'ada@example.test')).to.deep.equal([
      { recipient: 'ada@example.test', kind: 'account_deleted' },
    ]);
    expect(JSON.stringify(after)).to.not.include(person.own);

    const [notice] = await h.mailsTo('ada@example.test');
    expect(notice!.subject).to.equal('Your account was deleted');
    expect(await h.db.knex('mailOutbox').where({ kind: 'account_deleted' }).select('recipient')).to.deep.equal([{ recipient: '' }]);
    expect(JSON.stringify(await dump(h.db.knex))).to.not.include('ada@example.test');

    expect((await person.agent.get('/api/v1/me')).status).to.equal(401);
    expect((await person.laptop.get('/api/v1/me')).status).to.equal(401);
    const members = await bob.get(`/api/v1/households/${bobsHome}/members`);
    expect(members.status).to.equal(200);
    expect(members.body.map((m: { displayName: string }) => m.displayName)).to.deep.equal(['Bob']);
    expect((await carol.get('/api/v1/me')).status).to.equal(200);

    // The address can register again at once, and starts with nothing.
    const again = await signUp(h.app, 'ada@example.test', 'Ada again', PASSWORD);
    const me = await again.get('/api/v1/me');
    expect(me.body.memberships).to.deep.equal([]);
  });

  it('409 owner_must_transfer while the caller owns a household with other members, and nothing changes', async () => {
    const { bob, code } = await others();
    await ada(code);
    // Bob's session records this minute now, so the refused deletion has nothing to touch.
    await bob.get('/api/v1/me');
    await h.service.accounts.sessionsIdle();
    const before = await dump(h.db.knex);
    const res = await bob.delete('/api/v1/me').send({ password: PASSWORD });
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('owner_must_transfer');
    expect(res.headers['content-type']).to.match(/application\/problem\+json/);
    expect(await dump(h.db.knex)).to.deep.equal(before);
    expect((await bob.get('/api/v1/me')).status).to.equal(200);
  });

  it('two deletions of one account at once: one 204, the other 401, and nothing of the person is left', async () => {
    const { code, bobsHome } = await others();
    const before = await dump(h.db.knex);
    const person = await ada(code);
    const answers = await Promise.all([
      person.agent.delete('/api/v1/me').send({ password: PASSWORD }),
      person.laptop.delete('/api/v1/me').send({ password: PASSWORD }),
    ]);
    expect(answers.map((r) => r.status).sort()).to.deep.equal([204, 401]);
    const after = await dump(h.db.knex);
    expectCountsAsBefore(before, after, bobsHome);
  });

  it('the export carries every package’s data about the person', async () => {
    const { code } = await others();
    const person = await ada(code);
    h.clock.advance(60_000);
    const res = await person.agent.get('/api/v1/me/export');
    expect(res.status).to.equal(200);
    expect(res.headers['content-disposition']).to.match(/^attachment; filename="meal-planner-data-2026-11-22\.json"$/);
    const doc = JSON.parse(res.text);
    expect(doc.account.email).to.equal('ada@example.test');
    expect(doc.memberships.map((m: { householdName: string; role: string }) => [m.householdName, m.role]).sort()).to.deep.equal([
      ['Ada home', 'Owner'],
      ['Bob home', 'Adult'],
    ]);
    expect(doc.devices).to.have.length(1);
    // As GET /me/devices answers it: the token, the platform and the switches.
    expect(doc.devices[0]).to.include({ token: 'ada-phone', platform: 'ios', listChanges: true, reminders: true });
    expect(doc.sessions).to.have.length(2);
    const byName = Object.fromEntries(doc.households.map((x: { household: { name: string } }) => [x.household.name, x]));
    expect(Object.keys(byName).sort()).to.deep.equal(['Ada home', 'Bob home']);
    expect(byName['Bob home'].members).to.have.length(2);
    expect(byName['Ada home'].rules).to.have.length(1);
    expect(byName['Ada home'].events.map((e: { notes: string }) => e.notes).sort()).to.deep.equal([
      'Ada home 2026-12-01',
      'Ada home 2026-12-02',
      'Ada home 2026-12-03',
    ]);
    expect(res.text).to.not.include('password_hash').and.not.include('passwordHash');
  });
});
