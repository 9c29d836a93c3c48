/**
 * @svc/households: households, members and roles, settings, onboarding and the day's thread,
 * the plan and its AI credits, and intake (invite codes, waitlist).
 */

export { type CreditBalance, CreditLedger, type PoolBalance } from './CreditLedger.js';
export { TIME_ZONE_IDS } from './formats.js';
export type { CreateInviteCodeOptions, IntakeMode } from './intake.js';
export { changeSources, migrate, migrations, relations } from './migrations.js';
export * from './models/index.js';
export { householdCountryLink, householdRead, memberRead, membership, membershipsRead, membersRead } from './reads.js';
export { createRouter, type RouterOptions } from './router.js';
export * from './schemas.js';
export { type HouseholdAdmin, type HouseholdsConfig, HouseholdsService, type HouseholdsServiceOptions } from './service.js';
export {
  type HouseholdChanges,
  type HouseholdStore,
  type IntakeTicket,
  type NewHousehold,
  ObjectionHouseholdStore,
} from './store.js';
