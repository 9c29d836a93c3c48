import { randomUUID } from 'node:crypto';
import type { HouseholdAccess, HouseholdProfile, HouseholdProfiles, HouseholdRole, SpendTurn, Transaction } from '@svc/contracts';
import { ManualClock, NotFoundError, TooManyRequestsError } from '@svc/http-kit';
import { buildTestApp, createTestDatabase, type TestDatabase } from '@svc/test-support';
import type { Express } from 'express';
import type { Knex } from 'knex';
import { createRouter, MealRulesService, type MealRulesServiceOptions, migrations, ObjectionMealRuleStore } from '../src/index.js';

/** Memberships and profiles held in memory, standing in for @svc/households. */
export class FakeHouseholds {
  readonly roles = new Map<string, HouseholdRole>();
  readonly profileOf = new Map<string, HouseholdProfile>();
  /** Turns spent and committed (a spend inside a transaction that rolls back is not here). */
  turnsSpent: string[] = [];
  /** Every call of spendTurn, committed or not. */
  spendCalls: { householdId: string; inTransaction: boolean }[] = [];
  /** When set, spendTurn throws it instead of counting. */
  turnError: Error | undefined;

  household(profile: Partial<HouseholdProfile> = {}): string {
    const id = randomUUID();
    this.profileOf.set(id, { id, country: 'NO', timeZoneId: 'Europe/Oslo', preferredLanguage: 'nb', ...profile });
    return id;
  }

  member(householdId: string, role: HouseholdRole): string {
    const userId = randomUUID();
    this.roles.set(`${userId}|${householdId}`, role);
    return userId;
  }

  readonly access: HouseholdAccess = {
    roleOf: async ({ userId }, householdId) => {
      const role = this.roles.get(`${userId}|${householdId}`);
      if (!role) throw new NotFoundError('not_found', 'No such household');
      return role;
    },
  };

  readonly profiles: HouseholdProfiles = async (householdId) => {
    const profile = this.profileOf.get(householdId);
    if (!profile) throw new NotFoundError('not_found', 'No such household');
    return profile;
  };

  /** Counts a turn when the caller's transaction commits, as the real ledger's row would be. */
  readonly spendTurn: SpendTurn = async (householdId, trx?: Transaction) => {
    this.spendCalls.push({ householdId, inTransaction: trx !== undefined });
    if (this.turnError) throw this.turnError;
    if (!trx) {
      this.turnsSpent.push(householdId);
      return;
    }
    (trx as Knex.Transaction).executionPromise.then(
      () => this.turnsSpent.push(householdId),
      () => undefined,
    );
  };

  static quotaExceeded(): TooManyRequestsError {
    return new TooManyRequestsError('quota_exceeded', "The household's AI allowance is used up");
  }
}

export interface Harness {
  db: TestDatabase;
  clock: ManualClock;
  households: FakeHouseholds;
  app: Express;
  /** Builds an app around other service options (a fake parser, say) on the same database. */
  appWith(overrides: Partial<MealRulesServiceOptions>): Express;
  /** The service with those options (what the app's router uses). */
  serviceWith(overrides: Partial<MealRulesServiceOptions>): MealRulesService;
}

export async function startHarness(): Promise<Harness> {
  const db = await createTestDatabase([migrations]);
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const households = new FakeHouseholds();
  const serviceWith = (overrides: Partial<MealRulesServiceOptions>) =>
    new MealRulesService({
      store: new ObjectionMealRuleStore(db.knex),
      clock,
      access: households.access,
      profiles: households.profiles,
      spendTurn: households.spendTurn,
      ...overrides,
    });
  const appWith = (overrides: Partial<MealRulesServiceOptions>) => buildTestApp({ routers: [createRouter({ service: serviceWith(overrides) })] });
  return { db, clock, households, app: appWith({}), appWith, serviceWith };
}

/** A valid CreateMealRuleRequest of each kind (Permanent unless the kind needs a date). */
export const SAMPLES = {
  CategoryFrequency: {
    payload: { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 3 },
    strength: 'Hard',
    scope: 'Permanent',
    startDate: null,
    endDate: null,
  },
  CategoryExcludedDays: {
    payload: { kind: 'CategoryExcludedDays', category: 'Meat', excludedWeekdays: ['Monday', 'Wednesday'] },
    strength: 'Hard',
    scope: 'Permanent',
    startDate: null,
    endDate: null,
  },
  CategoryOnDay: {
    payload: { kind: 'CategoryOnDay', category: 'Taco', weekday: 'Friday', specificDate: null },
    strength: 'Soft',
    scope: 'Permanent',
    startDate: null,
    endDate: null,
  },
  MaximumActiveCookingTime: {
    payload: { kind: 'MaximumActiveCookingTime', minutes: 30, weekdays: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'], specificDate: null },
    strength: 'Hard',
    scope: 'DateRange',
    startDate: '2026-12-01',
    endDate: '2027-01-31',
  },
  DinnerTimeOnWeekday: {
    payload: { kind: 'DinnerTimeOnWeekday', time: '17:30', weekdays: ['Saturday', 'Sunday'] },
    strength: 'Soft',
    scope: 'Permanent',
    startDate: null,
    endDate: null,
  },
  PriceClassOnDays: {
    payload: { kind: 'PriceClassOnDays', ceiling: 'Cheap', weekdays: [] },
    strength: 'Soft',
    scope: 'Permanent',
    startDate: null,
    endDate: null,
  },
  RepeatAfterDays: {
    payload: { kind: 'RepeatAfterDays', days: 14 },
    strength: 'Hard',
    scope: 'Permanent',
    startDate: null,
    endDate: null,
  },
} as const;

export type SampleKind = keyof typeof SAMPLES;
export const KINDS = Object.keys(SAMPLES) as SampleKind[];

/** A deep copy of a sample, safe to change. */
export function sample(kind: SampleKind): Record<string, unknown> & { payload: Record<string, unknown> } {
  return structuredClone(SAMPLES[kind]) as unknown as Record<string, unknown> & { payload: Record<string, unknown> };
}
