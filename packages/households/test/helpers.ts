import { randomUUID } from 'node:crypto';
import type { AccountDirectory } from '@svc/contracts';
import { type ApiRouter, createLogger, ManualClock } from '@svc/http-kit';
import { buildTestApp, createTestDatabase, type TestDatabase } from '@svc/test-support';
import type { Express } from 'express';
import request from 'supertest';
import { CreditLedger, createRouter, type HouseholdsConfig, HouseholdsService, migrations, ObjectionHouseholdStore } from '../src/index.js';

/** An AccountDirectory in memory: names for the users a test makes, and the waitlist. */
export class MemoryAccounts implements AccountDirectory {
  readonly names = new Map<string, string>();
  readonly waitlist: { accountId: string; reason: string }[] = [];
  profileCalls = 0;

  user(displayName: string): string {
    const id = randomUUID();
    this.names.set(id, displayName);
    return id;
  }

  async profiles(ids: string[]) {
    this.profileCalls += 1;
    const out = new Map<string, { id: string; email: string | null; displayName: string }>();
    for (const id of ids) {
      const name = this.names.get(id);
      if (name !== undefined) out.set(id, { id, email: `${name.toLowerCase()}@example.test`, displayName: name });
    }
    return out;
  }

  async addToWaitlist(entry: { accountId: string; reason: string }): Promise<boolean> {
    if (this.waitlist.some((w) => w.accountId === entry.accountId)) return false;
    this.waitlist.push(entry);
    return true;
  }
}

/** The service's configuration and the ledger's monthly allowance, as the host reads them. */
export type TestConfig = HouseholdsConfig & { aiTurnsPerMonth: number };

export const defaultConfig: TestConfig = { intakeMode: 'open', inviteCodes: [], aiTurnsPerMonth: 3, welcomeCredits: 2 };

export interface Harness {
  db: TestDatabase;
  clock: ManualClock;
  accounts: MemoryAccounts;
  households: HouseholdsService;
  router: ApiRouter;
  app: Express;
  /** Rebuilds the service, router and app with another configuration (same database, clock and accounts). */
  configure(config: Partial<TestConfig>): void;
}

const START = '2026-11-22T09:00:00.000Z';

/** A database of its own, a manual clock and in-memory accounts; fills `h` when given. */
export async function harness(h = {} as Harness): Promise<Harness> {
  const db = await createTestDatabase([migrations]);
  const clock = new ManualClock(START);
  const accounts = new MemoryAccounts();
  Object.assign(h, { db, clock, accounts });
  h.configure = (config) => {
    const { aiTurnsPerMonth, ...rest } = { ...defaultConfig, ...config };
    h.households = new HouseholdsService({
      store: new ObjectionHouseholdStore(db.knex),
      ledger: new CreditLedger(db.knex, clock, aiTurnsPerMonth),
      clock,
      accounts,
      logger: createLogger({ level: 'silent' }),
      config: rest,
      invitationSecret: 'test invitation secret',
    });
    h.router = createRouter({ service: h.households });
    h.app = buildTestApp({ routers: [h.router] });
  };
  h.configure({});
  return h;
}

/**
 * The harness of one test file, with its hooks: made before the first test, dropped after the
 * last, and before each test emptied, back at the start time and at the default configuration.
 */
export function useHarness(): Harness {
  const h = {} as Harness;
  before(async () => {
    await harness(h);
  });
  after(async () => {
    await h.db.destroy();
  });
  beforeEach(async () => {
    await h.db.truncate();
    h.accounts.waitlist.length = 0;
    h.clock.set(START);
    h.configure({});
  });
  return h;
}

export const OSLO = { name: 'Nordmann', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' };

/** Creates a household through the API and answers its body. */
export async function createHousehold(app: Express, userId: string, body: Record<string, unknown> = OSLO): Promise<Record<string, unknown> & { id: string }> {
  const res = await request(app).post('/api/v1/households').set('X-Test-User', userId).send(body);
  if (res.status !== 201) throw new Error(`create household answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Invites `role` on behalf of `inviter` and has `invitee` accept. */
export async function join(app: Express, householdId: string, inviter: string, invitee: string, role: 'Adult' | 'Junior'): Promise<void> {
  const inv = await request(app).post(`/api/v1/households/${householdId}/invitations`).set('X-Test-User', inviter).send({ role });
  if (inv.status !== 201) throw new Error(`invite answered ${inv.status}: ${JSON.stringify(inv.body)}`);
  const acc = await request(app).post('/api/v1/invitations/accept').set('X-Test-User', invitee).send({ code: inv.body.code });
  if (acc.status !== 200) throw new Error(`accept answered ${acc.status}: ${JSON.stringify(acc.body)}`);
}

/** A household with an Owner, an Adult, a Junior, and an outsider who is a member of nothing. */
export async function family(h: Harness) {
  const owner = h.accounts.user('Olga');
  const adult = h.accounts.user('Arne');
  const junior = h.accounts.user('Jo');
  const outsider = h.accounts.user('Ute');
  const household = await createHousehold(h.app, owner);
  h.clock.advanceSeconds(1);
  await join(h.app, household.id, owner, adult, 'Adult');
  h.clock.advanceSeconds(1);
  await join(h.app, household.id, owner, junior, 'Junior');
  return { owner, adult, junior, outsider, household };
}
