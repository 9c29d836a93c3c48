import { randomUUID } from 'node:crypto';
import type { HouseholdAccess, HouseholdRole } from '@svc/contracts';
import { ManualClock, NotFoundError } from '@svc/http-kit';
import { buildTestApp, createTestDatabase, type TestDatabase, testAuthenticate } from '@svc/test-support';
import type { Express, RequestHandler } from 'express';
import { createRouter, DishesService, migrations, ObjectionDishStore } from '../src/index.js';

/** Memberships held in memory, standing in for @svc/households. */
export class FakeHouseholds {
  readonly roles = new Map<string, HouseholdRole>();

  household(): string {
    return randomUUID();
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
}

/** `X-Test-Scopes: a,b` makes the test principal a token's with those scopes (none: a cookie session). */
const withScopes: RequestHandler = (req, _res, next) => {
  const scopes = req.get('X-Test-Scopes');
  if (req.principal && scopes !== undefined) req.principal = { ...req.principal, scopes: scopes.split(',').filter(Boolean) } as typeof req.principal;
  next();
};

export interface Harness {
  db: TestDatabase;
  clock: ManualClock;
  households: FakeHouseholds;
  service: DishesService;
  store: ObjectionDishStore;
  app: Express;
}

export async function startHarness(): Promise<Harness> {
  const db = await createTestDatabase([migrations]);
  const clock = new ManualClock('2026-12-01T17:00:00.000Z');
  const households = new FakeHouseholds();
  const store = new ObjectionDishStore(db.knex);
  const service = new DishesService({ store, clock, access: households.access, cursorSecret: 'test cursor secret' });
  const app = buildTestApp({ routers: [createRouter({ service })], authenticate: [testAuthenticate, withScopes] });
  return { db, clock, households, service, store, app };
}

/** A valid DishRequest. */
export function dishBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Fish cakes with potatoes', category: 'Fish', activeMinutes: 25, priceClass: 'Cheap', tags: ['classic'], madeAgain: true, ...overrides };
}
