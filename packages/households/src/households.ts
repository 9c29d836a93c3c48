import type { AccountDirectory } from '@svc/contracts';
import { assertRole } from '@svc/http-kit';
import type { HouseholdResponse, HouseholdStore } from './HouseholdStore.js';
import { admit, type IntakeMode } from './intake.js';
import { type CreateHouseholdRequest, householdChanges, newHousehold, type UpdateHouseholdRequest } from './settings.js';

export interface CreateContext {
  store: HouseholdStore;
  accounts: AccountDirectory;
  intakeMode: IntakeMode;
  configCodes: ReadonlySet<string>;
  welcomeCredits: number;
  now: () => Date;
}

/**
 * POST /households: the body is checked first (400), then intake (403), then the household, its
 * Owner, its plan, the welcome bundle and the spent invite code are written in one transaction.
 */
export async function createHousehold(ctx: CreateContext, userId: string, body: CreateHouseholdRequest): Promise<HouseholdResponse> {
  const household = newHousehold(body);
  const intake = await admit({ mode: ctx.intakeMode, configCodes: ctx.configCodes, inviteCode: body.inviteCode, userId, accounts: ctx.accounts });
  return ctx.store.create({ userId, household, intake, welcomeCredits: ctx.welcomeCredits, at: ctx.now() });
}

/** PATCH /households/{id}: Owner only (a non-member gets 404 before anything else is said). */
export async function updateHousehold(
  ctx: { store: HouseholdStore; now: () => Date },
  userId: string,
  householdId: string,
  body: UpdateHouseholdRequest,
): Promise<HouseholdResponse> {
  assertRole(await ctx.store.roleOf(userId, householdId), ['Owner']);
  return ctx.store.update(householdId, householdChanges(body), ctx.now());
}
