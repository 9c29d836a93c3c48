import { expect } from 'chai';
import request from 'supertest';
import { ObjectionHouseholdStore } from '../src/index.js';
import { createHousehold, family, useHarness } from './helpers.js';

describe('onboarding completion', () => {
  const h = useHarness();

  const complete = (householdId: string, who: string, body?: object) => {
    const req = request(h.app).post(`/api/v1/households/${householdId}/onboarding/complete`).set('X-Test-User', who);
    return body === undefined ? req : req.send(body);
  };
  const count = async (table: string) => Number((await h.db.knex(table).count({ n: '*' }).first())?.n);

  it('lets a Junior complete it: stamps the time, applies the dinner time and writes the recap into the day thread', async () => {
    const { junior, owner, household } = await family(h);
    h.clock.set('2026-11-22T23:30:00.000Z'); // already 23 November in Oslo
    const res = await complete(household.id, junior, { skippedSteps: ['Rules', 'Pantry', 'Rules'], defaultDinnerTime: '18:45:00' });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ onboardingCompletedAt: '2026-11-22T23:30:00.000Z', alreadyCompleted: false, conversationId: res.body.conversationId });
    const read = await request(h.app).get(`/api/v1/households/${household.id}`).set('X-Test-User', owner);
    expect(read.body).to.include({ onboardingCompletedAt: '2026-11-22T23:30:00.000Z', defaultDinnerTime: '18:45', updatedAt: '2026-11-22T23:30:00.000Z' });
    const thread = await request(h.app).get(`/api/v1/households/${household.id}/conversations/${res.body.conversationId}`).set('X-Test-User', owner);
    expect(thread.body.date).to.equal('2026-11-23');
    expect(thread.body.messages).to.have.length(1);
    const recap = thread.body.messages[0];
    expect(recap.kind).to.equal('onboarding_recap');
    expect(recap.text).to.include('Nordmann');
    expect(recap.text).to.include('Olga (Owner), Arne (Adult), Jo (Junior)');
    expect(recap.text).to.include('18:45 (Europe/Oslo)');
    expect(recap.text).to.include('metric');
    expect(recap.text).to.include('Skipped for now: the pantry, meal rules.');
  });

  it('writes the recap without AI credits', async () => {
    const owner = h.accounts.user('Olga');
    const household = await createHousehold(h.app, owner);
    const before = await h.households.admin.creditBalance(household.id);
    const ledger = await count('creditLedger');
    expect((await complete(household.id, owner, {})).status).to.equal(200);
    expect(await count('creditLedger')).to.equal(ledger);
    expect(await h.households.admin.creditBalance(household.id)).to.deep.equal(before);
  });

  it('accepts a request without a body, and says every step is done when none was skipped', async () => {
    const owner = h.accounts.user('Olga');
    const household = await createHousehold(h.app, owner);
    const res = await complete(household.id, owner);
    expect(res.status).to.equal(200);
    const [message] = await h.db.knex('householdMessages').select('text');
    expect(message.text).to.include('Every step is done.');
    expect((await h.db.knex('households').first()).defaultDinnerTime).to.equal('17:30:00');
  });

  it('answers a repeat with the original stamp, alreadyCompleted true and the same thread, and writes nothing', async () => {
    const { owner, adult, household } = await family(h);
    const first = await complete(household.id, owner, { defaultDinnerTime: '18:00' });
    const afterFirst = (await request(h.app).get(`/api/v1/households/${household.id}`).set('X-Test-User', owner)).body;
    h.clock.set('2026-11-25T12:00:00.000Z');
    const again = await complete(household.id, adult, { defaultDinnerTime: '20:00', skippedSteps: ['People'] });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal({
      onboardingCompletedAt: first.body.onboardingCompletedAt,
      alreadyCompleted: true,
      conversationId: first.body.conversationId,
    });
    expect(await count('householdMessages')).to.equal(1);
    expect(await count('householdConversations')).to.equal(1);
    const afterRepeat = (await request(h.app).get(`/api/v1/households/${household.id}`).set('X-Test-User', owner)).body;
    expect(afterRepeat).to.deep.equal(afterFirst);
    expect(afterRepeat.defaultDinnerTime).to.equal('18:00');
  });

  it('writes exactly one recap when eight members complete it at once', async () => {
    const { owner, adult, junior, household } = await family(h);
    const callers = [owner, adult, junior, owner, adult, junior, owner, adult];
    const answers = await Promise.all(callers.map((who) => complete(household.id, who, {})));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(8).fill(200));
    expect(answers.filter((a) => a.body.alreadyCompleted === false)).to.have.length(1);
    expect(new Set(answers.map((a) => a.body.onboardingCompletedAt)).size).to.equal(1);
    expect(new Set(answers.map((a) => a.body.conversationId)).size).to.equal(1);
    expect(await count('householdMessages')).to.equal(1);
    expect(await count('householdConversations')).to.equal(1);
  });

  it('lets the row lock, not the early check, decide: eight store completions at once write one recap', async () => {
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    const store = new ObjectionHouseholdStore(h.db.knex);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.onboarding.completeOnboarding({
          householdId: household.id,
          at: new Date(h.clock.now().getTime() + i),
          defaultDinnerTime: null,
          skippedSteps: [],
          recap: () => `recap ${i}`,
        }),
      ),
    );
    expect(answers.filter((a) => !a.alreadyCompleted)).to.have.length(1);
    const winner = answers.find((a) => !a.alreadyCompleted)!;
    expect(answers.every((a) => a.onboardingCompletedAt === winner.onboardingCompletedAt && a.conversationId === winner.conversationId)).to.equal(true);
    expect(await count('householdMessages')).to.equal(1);
  });

  it('writes into the day thread that is already there for that date', async () => {
    const owner = h.accounts.user('Olga');
    const household = await createHousehold(h.app, owner);
    const [existing] = await h.db
      .knex('householdConversations')
      .insert({ householdId: household.id, date: '2026-11-22', createdAt: new Date('2026-11-22T05:00:00Z') })
      .returning('id');
    await h.db
      .knex('householdMessages')
      .insert({ conversationId: existing.id, kind: 'morning_message', text: 'Good morning', createdAt: new Date('2026-11-22T05:00:00Z') });
    const res = await complete(household.id, owner, {});
    expect(res.body.conversationId).to.equal(existing.id);
    const thread = await request(h.app).get(`/api/v1/households/${household.id}/conversations/${existing.id}`).set('X-Test-User', owner);
    expect(thread.body.messages.map((m: { kind: string }) => m.kind)).to.deep.equal(['morning_message', 'onboarding_recap']);
  });

  it('answers 404 to a non-member and for an unknown household, and writes nothing', async () => {
    const { outsider, household } = await family(h);
    const res = await complete(household.id, outsider, {});
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('not_found');
    const unknown = await complete('6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e', outsider, {});
    expect(unknown.status).to.equal(404);
    expect(await count('householdMessages')).to.equal(0);
    expect((await h.db.knex('households').first()).onboardingCompletedAt).to.equal(null);
  });

  for (const [what, body] of [
    ['an unknown step', { skippedSteps: ['Dessert'] }],
    ['steps that are no list', { skippedSteps: 'Pantry' }],
    ['a bad dinner time', { defaultDinnerTime: '7pm' }],
  ] as const) {
    it(`answers 400 validation_failed for ${what} and writes nothing`, async () => {
      const owner = h.accounts.user('Olga');
      const household = await createHousehold(h.app, owner);
      const res = await complete(household.id, owner, body);
      expect(res.status).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(await count('householdMessages')).to.equal(0);
    });
  }

  it('answers 401 without a session', async () => {
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    expect((await request(h.app).post(`/api/v1/households/${household.id}/onboarding/complete`).send({})).status).to.equal(401);
  });

  it('answers 409 onboarding_in_progress when the household stays locked past the lock timeout', async () => {
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    const store = new ObjectionHouseholdStore(h.db.knex, { onboardingLockTimeoutMs: 50 });
    const holder = await h.db.knex.transaction();
    try {
      await holder('households').where({ id: household.id }).forUpdate();
      const attempt = store.onboarding.completeOnboarding({
        householdId: household.id,
        at: h.clock.now(),
        defaultDinnerTime: null,
        skippedSteps: [],
        recap: () => 'recap',
      });
      try {
        await attempt;
        expect.fail('should refuse');
      } catch (err) {
        expect((err as { status: number }).status).to.equal(409);
        expect((err as { code: string }).code).to.equal('onboarding_in_progress');
      }
    } finally {
      await holder.rollback();
    }
    expect(await count('householdMessages')).to.equal(0);
  });
});
