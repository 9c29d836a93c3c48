import { ManualClock } from '@svc/http-kit';
import { expect } from 'chai';
import { CreditLedger } from '../src/CreditLedger.js';
import { createHousehold, type Harness, harness, OSLO } from './helpers.js';

/** Calls spendTurn and answers 'ok' or the refusal's status, code and Retry-After. */
async function spend(h: Harness, householdId: string): Promise<string | { status: number; code: string; retryAfter?: string }> {
  try {
    await h.households.spendTurn(householdId);
    return 'ok';
  } catch (err) {
    const e = err as { status: number; code: string; headers: Record<string, string> };
    return { status: e.status, code: e.code, retryAfter: e.headers?.['Retry-After'] };
  }
}

describe('plan and AI credits', () => {
  let h: Harness;
  before(async () => {
    h = await harness(); // aiTurnsPerMonth 3, welcomeCredits 2
  });
  after(async () => {
    await h.db.destroy();
  });
  beforeEach(async () => {
    await h.db.truncate();
    h.clock.set('2026-11-22T09:00:00.000Z');
    h.configure({});
  });

  it('opens a subscription on the default plan with every household', async () => {
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    const subs = await h.db.knex('householdSubscriptions').select('householdId', 'plan', 'startedAt', 'endedAt');
    expect(subs).to.deep.equal([{ householdId: household.id, plan: 'default', startedAt: new Date('2026-11-22T09:00:00.000Z'), endedAt: null }]);
  });

  it('spends the month allowance, then the welcome credits, then refuses with 429 quota_exceeded and no Retry-After', async () => {
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await spend(h, household.id));
    expect(answers.slice(0, 5)).to.deep.equal(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(answers[5]).to.deep.equal({ status: 429, code: 'quota_exceeded', retryAfter: undefined });
    const ledger = await h.db.knex('creditLedger').select('pool', 'reason', 'delta', 'period').orderBy('id');
    expect(ledger).to.deep.equal([
      { pool: 'welcome', reason: 'welcome_bundle', delta: 2, period: null },
      { pool: 'allowance', reason: 'monthly_allowance', delta: 3, period: '2026-11' },
      { pool: 'allowance', reason: 'ai_turn', delta: -1, period: '2026-11' },
      { pool: 'allowance', reason: 'ai_turn', delta: -1, period: '2026-11' },
      { pool: 'allowance', reason: 'ai_turn', delta: -1, period: '2026-11' },
      { pool: 'welcome', reason: 'ai_turn', delta: -1, period: null },
      { pool: 'welcome', reason: 'ai_turn', delta: -1, period: null },
    ]);
    expect(await h.households.admin.creditBalance(household.id)).to.deep.equal({
      householdId: household.id,
      period: '2026-11',
      allowance: { granted: 3, spent: 3, remaining: 0 },
      welcome: { granted: 2, spent: 2, remaining: 0 },
      aiPausedUntil: null,
    });
  });

  it('grants the welcome bundle once per user, with the first household only', async () => {
    const olga = h.accounts.user('Olga');
    const first = await createHousehold(h.app, olga);
    const second = await createHousehold(h.app, olga, { ...OSLO, name: 'Hytta' });
    expect((await h.households.admin.creditBalance(first.id)).welcome).to.deep.equal({ granted: 2, spent: 0, remaining: 2 });
    expect((await h.households.admin.creditBalance(second.id)).welcome).to.deep.equal({ granted: 0, spent: 0, remaining: 0 });
    expect(await h.db.knex('welcomeBundles').select('userId', 'householdId', 'credits')).to.deep.equal([{ userId: olga, householdId: first.id, credits: 2 }]);
    expect(await h.db.knex('creditLedger').where({ reason: 'welcome_bundle' }).count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    for (let i = 0; i < 3; i++) expect(await spend(h, second.id)).to.equal('ok');
    expect(await spend(h, second.id)).to.deep.include({ status: 429, code: 'quota_exceeded' });
  });

  it('grants one bundle even when a user creates two households at the same moment', async () => {
    const olga = h.accounts.user('Olga');
    await Promise.all([createHousehold(h.app, olga), createHousehold(h.app, olga, { ...OSLO, name: 'Hytta' })]);
    expect(await h.db.knex('welcomeBundles').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    expect(await h.db.knex('creditLedger').where({ reason: 'welcome_bundle' }).count({ n: '*' }).first()).to.deep.equal({ n: '1' });
  });

  it('restores the allowance in a new calendar month of the household time zone', async () => {
    h.configure({ welcomeCredits: 0 });
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    for (let i = 0; i < 3; i++) expect(await spend(h, household.id)).to.equal('ok');
    h.clock.set('2026-11-30T22:59:59.000Z'); // still November in Oslo (UTC+1)
    expect(await spend(h, household.id)).to.deep.include({ status: 429, code: 'quota_exceeded' });
    h.clock.set('2026-11-30T23:00:00.000Z'); // 1 December 00:00 in Oslo
    expect((await h.households.admin.creditBalance(household.id)).allowance).to.deep.equal({ granted: 3, spent: 0, remaining: 3 });
    for (let i = 0; i < 3; i++) expect(await spend(h, household.id)).to.equal('ok');
    expect(await spend(h, household.id)).to.deep.include({ status: 429, code: 'quota_exceeded' });
    const periods = await h.db.knex('creditLedger').where({ reason: 'monthly_allowance' }).orderBy('id').pluck('period');
    expect(periods).to.deep.equal(['2026-11', '2026-12']);
  });

  it('keeps unspent welcome credits across months and spends the allowance first', async () => {
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    for (let i = 0; i < 4; i++) await spend(h, household.id);
    h.clock.set('2026-12-15T12:00:00.000Z');
    await spend(h, household.id);
    const balance = await h.households.admin.creditBalance(household.id);
    expect(balance.allowance).to.deep.equal({ granted: 3, spent: 1, remaining: 2 });
    expect(balance.welcome).to.deep.equal({ granted: 2, spent: 1, remaining: 1 });
  });

  it('refuses a paused household with 429 ai_paused and Retry-After as an HTTP date, and spends nothing', async () => {
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    const until = new Date('2026-11-23T10:30:00.500Z');
    expect(await h.households.admin.pauseAi(household.id, until)).to.deep.equal({ householdId: household.id, aiPausedUntil: until.toISOString() });
    expect(await spend(h, household.id)).to.deep.equal({ status: 429, code: 'ai_paused', retryAfter: 'Mon, 23 Nov 2026 10:30:01 GMT' });
    expect(await h.db.knex('creditLedger').where({ reason: 'ai_turn' }).count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    expect((await h.households.admin.creditBalance(household.id)).aiPausedUntil).to.equal(until.toISOString());
    h.clock.set('2026-11-23T10:30:01.000Z');
    expect(await spend(h, household.id)).to.equal('ok');
  });

  it('answers again after resumeAi, and says which pause it lifted', async () => {
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    await h.households.admin.pauseAi(household.id, new Date('2027-01-01T00:00:00.000Z'));
    expect(await h.households.admin.resumeAi(household.id)).to.deep.equal({ householdId: household.id, wasPausedUntil: '2027-01-01T00:00:00.000Z' });
    expect(await spend(h, household.id)).to.equal('ok');
    expect(await h.households.admin.resumeAi(household.id)).to.deep.equal({ householdId: household.id, wasPausedUntil: null });
  });

  it('answers 404 for an unknown household in spendTurn and the admin calls', async () => {
    const id = '6b1d1f4e-8a7c-4c33-9d1e-5c0a1b2c3d4e';
    expect(await spend(h, id)).to.deep.include({ status: 404 });
    expect(await spend(h, 'not-a-uuid')).to.deep.include({ status: 404 });
    for (const call of [() => h.households.admin.pauseAi(id, new Date()), () => h.households.admin.resumeAi(id), () => h.households.admin.creditBalance(id)]) {
      try {
        await call();
        expect.fail('should throw');
      } catch (err) {
        expect((err as { status: number }).status).to.equal(404);
      }
    }
  });

  it('never spends more than there is when turns race', async () => {
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    const answers = await Promise.all(Array.from({ length: 12 }, () => spend(h, household.id)));
    expect(answers.filter((a) => a === 'ok')).to.have.length(5);
    expect(answers.filter((a) => a !== 'ok')).to.have.length(7);
    expect(await h.db.knex('creditLedger').where({ reason: 'monthly_allowance' }).count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    const balance = await h.households.admin.creditBalance(household.id);
    expect([balance.allowance.remaining, balance.welcome.remaining]).to.deep.equal([0, 0]);
  });

  it('takes the allowance size from the configuration at the month first turn', async () => {
    const household = await createHousehold(h.app, h.accounts.user('Olga'));
    const ledger = new CreditLedger(h.db.knex, new ManualClock('2026-11-22T09:00:00.000Z'), 10);
    await ledger.spendTurn(household.id);
    expect((await ledger.balance(household.id)).allowance).to.deep.equal({ granted: 10, spent: 1, remaining: 9 });
  });
});
