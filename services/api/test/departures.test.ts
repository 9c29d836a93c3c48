/**
 * What a member who leaves, is removed or deletes their account leaves behind (issue 29, items 1
 * and 2), and what older invitation codes may still give them (issue 30, item 1), through the
 * composed service: meal events' participants, the calendar feed, every table.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import request from 'supertest';
import { type Harness, signUp, startHarness } from './harness.js';

const PASSWORD = 'correct horse battery';

/** The feed's lines with folding undone (RFC 5545 §3.1). */
function unfolded(text: string): string[] {
  return text.replace(/\r\n[ \t]/g, '').split('\r\n');
}

/** Every table (but the migration history) whose rows, as JSON text, contain `needle`. */
async function tablesHolding(knex: Knex, needle: string): Promise<string[]> {
  const tables: string[] = (await knex('pg_tables').select('tablename').where('schemaname', 'public'))
    .map((r: { tablename: string }) => r.tablename)
    .filter((t: string) => !t.startsWith('knex_migrations'));
  const found: string[] = [];
  for (const table of tables) {
    const { rows } = await knex.raw(`select count(*)::int as n from "${table}" t where to_jsonb(t)::text like ?`, [`%${needle}%`]);
    if (rows[0].n > 0) found.push(table);
  }
  return found.sort();
}

describe('departed members: events, the calendar feed, older invitation codes', function () {
  this.timeout(60_000);
  let h: Harness;
  before(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000' });
  });
  after(() => h?.close());

  let n = 0;
  /** An Owner's household with a member of `role` who joined with a code, an event naming both, and a calendar feed. */
  async function scene(role: 'Adult' | 'Junior', name: string) {
    n += 1;
    const owner = await signUp(h.app, `owner${n}@example.test`, `Owner${n}`, PASSWORD);
    const member = await signUp(h.app, `member${n}@example.test`, name, PASSWORD);
    const household = (await owner.post('/api/v1/households').send({ name: `Home ${n}`, timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' })).body;
    const base = `/api/v1/households/${household.id}`;
    const { code } = (await owner.post(`${base}/invitations`).send({ role }).expect(201)).body;
    const joined = (await member.post('/api/v1/invitations/accept').send({ code }).expect(200)).body;
    const members = (await owner.get(`${base}/members`).expect(200)).body as { memberId: string; displayName: string }[];
    const ownerMember = members.find((m) => m.memberId !== joined.memberId)!;
    const event = (
      await owner
        .post(`${base}/events`)
        .send({
          date: '2026-11-28',
          eventType: 'Guests',
          servingTime: '18:30',
          availableCookingMinutes: 60,
          notes: 'Dinner',
          participants: [
            { memberId: ownerMember.memberId, name: ownerMember.displayName },
            { memberId: joined.memberId, name },
            { memberId: null, name: 'Grandma' },
          ],
        })
        .expect(201)
    ).body;
    const feed = (await owner.post(`${base}/calendar-feed`).expect(201)).body as { url: string };
    return { owner, member, household, base, memberId: joined.memberId as string, ownerMember, event, feedPath: new URL(feed.url).pathname };
  }

  /** GET of the event, then PUT of the same body back (what a client editing it does). */
  async function getThenPut(agent: request.Agent, base: string, eventId: string) {
    const got = (await agent.get(`${base}/events/${eventId}`).expect(200)).body;
    const { date, eventType, servingTime, availableCookingMinutes, notes, participants } = got;
    const put = await agent.put(`${base}/events/${eventId}`).send({ date, eventType, servingTime, availableCookingMinutes, notes, participants });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    return { got, put: put.body };
  }

  it('a member who leaves stays a participant by name without the link; GET → PUT answers 200; the feed they could read is retired', async () => {
    const s = await scene('Adult', 'Ada Leaver');
    await request(h.app).get(s.feedPath).expect(200);
    await s.member.delete(`${s.base}/members/${s.memberId}`).expect(204);

    const { got, put } = await getThenPut(s.owner, s.base, s.event.id);
    expect(got.participants).to.deep.equal([
      { memberId: s.ownerMember.memberId, name: s.ownerMember.displayName },
      { memberId: null, name: 'Ada Leaver' },
      { memberId: null, name: 'Grandma' },
    ]);
    expect(put.participants).to.deep.equal(got.participants);
    // The list and the export answer the same.
    const page = (await s.owner.get(`${s.base}/events`).expect(200)).body;
    expect(page.items[0].participants).to.deep.equal(got.participants);
    // The URL the departed Adult may keep answers 404; a new one shows the name as plain text.
    expect((await request(h.app).get(s.feedPath).expect(404)).body.code).to.equal('not_found');
    await s.owner.get(`${s.base}/calendar-feed`).expect(404);
    const fresh = new URL((await s.owner.post(`${s.base}/calendar-feed`).expect(201)).body.url).pathname;
    expect(unfolded((await request(h.app).get(fresh).expect(200)).text)).to.include(`DESCRIPTION:${s.ownerMember.displayName}\\, Ada Leaver\\, Grandma`);
  });

  it('a removed member: the same, and a code minted before the removal does not let them back in (it still works for someone else)', async () => {
    const s = await scene('Adult', 'Rita Removed');
    const { code: older } = (await s.owner.post(`${s.base}/invitations`).send({ role: 'Adult' }).expect(201)).body;
    h.clock.advance(1000);
    await s.owner.delete(`${s.base}/members/${s.memberId}`).expect(204);
    await request(h.app).get(s.feedPath).expect(404);
    const { got } = await getThenPut(s.owner, s.base, s.event.id);
    expect(got.participants[1]).to.deep.equal({ memberId: null, name: 'Rita Removed' });

    const back = await s.member.post('/api/v1/invitations/accept').send({ code: older });
    expect(back.status, JSON.stringify(back.body)).to.equal(404);
    expect(back.body.code).to.equal('invitation_not_found');
    expect((await s.member.get(`${s.base}`)).status).to.equal(404);
    // The code was not spent: someone else it was meant for joins with it.
    const other = await signUp(h.app, `other${n}@example.test`, 'Other', PASSWORD);
    expect((await other.post('/api/v1/invitations/accept').send({ code: older }).expect(200)).body.role).to.equal('Adult');
    // A code minted after the removal is the Owner's new decision: it admits them.
    h.clock.advance(1000);
    const { code: newer } = (await s.owner.post(`${s.base}/invitations`).send({ role: 'Junior' }).expect(201)).body;
    expect((await s.member.post('/api/v1/invitations/accept').send({ code: newer }).expect(200)).body.role).to.equal('Junior');
  });

  it('a member made a Junior: the feed is retired; after leaving, an Adult code minted before the demotion gives a Junior membership', async () => {
    const s = await scene('Adult', 'Dag Demoted');
    const { code: older } = (await s.owner.post(`${s.base}/invitations`).send({ role: 'Adult' }).expect(201)).body;
    // A code the member minted while an Adult goes with the right to mint it.
    const { code: theirs } = (await s.member.post(`${s.base}/invitations`).send({ role: 'Adult' }).expect(201)).body;
    h.clock.advance(1000);
    await s.owner.patch(`${s.base}/members/${s.memberId}`).send({ role: 'Junior' }).expect(200);
    await request(h.app).get(s.feedPath).expect(404);
    const listed = (await s.owner.get(`${s.base}/invitations`).expect(200)).body.items.map((i: { code: string }) => i.code);
    expect(listed).to.include(older).and.not.include(theirs);

    h.clock.advance(1000);
    await s.member.delete(`${s.base}/members/${s.memberId}`).expect(204);
    const back = (await s.member.post('/api/v1/invitations/accept').send({ code: older }).expect(200)).body;
    expect(back.role).to.equal('Junior');
    expect((await s.member.get('/api/v1/me')).body.memberships.find((m: { householdId: string }) => m.householdId === s.household.id).role).to.equal('Junior');
    await s.member.post(`${s.base}/invitations`).send({ role: 'Adult' }).expect(403);
    const other = await signUp(h.app, `demoted-other${n}@example.test`, 'Other', PASSWORD);
    expect((await other.post('/api/v1/invitations/accept').send({ code: theirs })).body.code).to.equal('invitation_not_found');
  });

  it('a Junior who leaves does not retire the feed (a Junior never could read it)', async () => {
    const s = await scene('Junior', 'Jo Junior');
    await s.member.delete(`${s.base}/members/${s.memberId}`).expect(204);
    await request(h.app).get(s.feedPath).expect(200);
    const { got } = await getThenPut(s.owner, s.base, s.event.id);
    expect(got.participants[1]).to.deep.equal({ memberId: null, name: 'Jo Junior' });
  });

  it('GET → PUT still answers 200 when the member left between the GET and the PUT (the departed participant is stored without the link)', async () => {
    const s = await scene('Adult', 'Stale Sam');
    const got = (await s.owner.get(`${s.base}/events/${s.event.id}`).expect(200)).body;
    expect(got.participants[1].memberId).to.equal(s.memberId);
    await s.member.delete(`${s.base}/members/${s.memberId}`).expect(204);
    const { date, eventType, servingTime, availableCookingMinutes, notes, participants } = got;
    const put = await s.owner.put(`${s.base}/events/${s.event.id}`).send({ date, eventType, servingTime, availableCookingMinutes, notes, participants });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.participants[1]).to.deep.equal({ memberId: null, name: 'Stale Sam' });
    // A member id that never was in the event is still refused.
    const strangerId = s.ownerMember.memberId.replace(/^./, (c: string) => (c === 'a' ? 'b' : 'a'));
    const refused = await s.owner
      .put(`${s.base}/events/${s.event.id}`)
      .send({ date, eventType, servingTime, availableCookingMinutes, notes, participants: [{ memberId: strangerId, name: 'X' }] });
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0].field).to.equal('participants[0].memberId');
  });

  it("a PUT naming a member racing that member's removal never leaves the event linked to a non-member (15 rounds)", async () => {
    const s = await scene('Adult', 'Racing Rut');
    await s.owner.delete(`${s.base}/members/${s.memberId}`).expect(204);
    const seen = new Set<string>();
    for (let round = 0; round < 15; round++) {
      h.clock.advance(1000);
      const { code } = (await s.owner.post(`${s.base}/invitations`).send({ role: 'Adult' }).expect(201)).body;
      const { memberId } = (await s.member.post('/api/v1/invitations/accept').send({ code }).expect(200)).body;
      const body = {
        date: '2026-12-05',
        eventType: 'Guests',
        servingTime: '18:00',
        availableCookingMinutes: 30,
        notes: `round ${round}`,
        participants: [{ memberId, name: 'Racing Rut' }],
      };
      const event = (await s.owner.post(`${s.base}/events`).send(body).expect(201)).body;
      const [put, removed] = await Promise.all([
        s.owner.put(`${s.base}/events/${event.id}`).send({ ...body, servingTime: '19:00' }),
        s.owner.delete(`${s.base}/members/${memberId}`),
      ]);
      expect(removed.status).to.equal(204);
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      seen.add(put.body.participants[0].memberId === null ? 'after' : 'before');
      const got = (await s.owner.get(`${s.base}/events/${event.id}`).expect(200)).body;
      expect(got.participants, `round ${round}`).to.deep.equal([{ memberId: null, name: 'Racing Rut' }]);
      expect(got.servingTime).to.equal('19:00');
    }
    expect(seen.size).to.be.greaterThan(0);
  });

  it("deleting an account removes the person's name from every event, the feed and every table; their feed is retired", async () => {
    const s = await scene('Adult', 'Zelda Erased');
    // The onboarding recap names everyone at the table.
    const { conversationId } = (await s.owner.post(`${s.base}/onboarding/complete`).send({}).expect(200)).body;
    expect((await s.owner.get(`${s.base}/conversations/${conversationId}`).expect(200)).body.messages[0].text).to.include('Zelda Erased (Adult)');
    await s.member.delete('/api/v1/me').send({ password: PASSWORD }).expect(204);
    await request(h.app).get(s.feedPath).expect(404);
    const { got } = await getThenPut(s.owner, s.base, s.event.id);
    expect(got.participants).to.deep.equal([
      { memberId: s.ownerMember.memberId, name: s.ownerMember.displayName },
      { memberId: null, name: 'Former member' },
      { memberId: null, name: 'Grandma' },
    ]);
    const fresh = new URL((await s.owner.post(`${s.base}/calendar-feed`).expect(201)).body.url).pathname;
    const text = (await request(h.app).get(fresh).expect(200)).text;
    expect(text).to.not.include('Zelda');
    expect(unfolded(text)).to.include(`DESCRIPTION:${s.ownerMember.displayName}\\, Former member\\, Grandma`);
    // The deletion notice waits in the outbox until it is sent (to the person, about the person); then nothing is left.
    expect(await h.mailsTo(`member${n}@example.test`)).to.not.be.empty;
    expect(await tablesHolding(h.db.knex, 'Zelda')).to.deep.equal([]);
    expect((await s.owner.get(`${s.base}/conversations/${conversationId}`).expect(200)).body.messages[0].text).to.include(
      `At the table: ${s.ownerMember.displayName} (Owner), Former member (Adult).`,
    );
  });

  it('an account deleted after it left a household: its name there goes too, also after the event was edited in between', async () => {
    const s = await scene('Adult', 'Lena Later');
    await s.member.delete(`${s.base}/members/${s.memberId}`).expect(204);
    // An edit after the departure (GET → PUT, and a change of time) keeps what links the name to the person.
    const { got } = await getThenPut(s.owner, s.base, s.event.id);
    await s.owner
      .put(`${s.base}/events/${s.event.id}`)
      .send({ ...got, id: undefined, householdId: undefined, createdAt: undefined, updatedAt: undefined, servingTime: '19:00' })
      .expect(200);
    expect(await tablesHolding(h.db.knex, 'Lena Later')).to.include('meal_events');
    await s.member.delete('/api/v1/me').send({ password: PASSWORD }).expect(204);
    await h.mailsTo(`member${n}@example.test`);
    expect(await tablesHolding(h.db.knex, 'Lena Later')).to.deep.equal([]);
    expect((await s.owner.get(`${s.base}/events/${s.event.id}`).expect(200)).body.participants[1]).to.deep.equal({ memberId: null, name: 'Former member' });
  });
});
