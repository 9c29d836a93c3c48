// biome-ignore-all assist/source/organizeImports: every domain package's entry point has the same sections in the same order (docs/packages.md)
/**
 * @svc/households: households, members and roles, settings, onboarding and the day's thread,
 * the plan and its AI credits, and intake (invite codes, waitlist).
 */

// Migrations: the package's tables (and its relations to other packages' tables), its change sources, its queue and the writes that enqueue on it.
export { changeSources, jobSources, migrate, migrations, queues, relations } from './migrations.js';

// Models: one per table.
export * from './models/index.js';

// Declared reads (the host's read kernel loads them with the caller), the membership guard, lent fields.
export { householdCountryLink, householdRead, type ListedMember, memberRead, membership, membershipsRead, membersRead } from './reads.js';

// The router.
export { createRouter, type RouterOptions } from './router.js';

// Schemas and their types.
export * from './schemas.js';

// The service.
export { type HouseholdsConfig, HouseholdsService, type HouseholdsServiceOptions } from './service.js';

// The store: its interface and its Objection implementation.
export {
  type HouseholdChanges,
  type HouseholdStore,
  type IntakeTicket,
  type InvitationStore,
  type NewHousehold,
  ObjectionHouseholdStore,
  type OnboardingStore,
  type StoredInvitation,
} from './store.js';

// Also of this package: the operator's capabilities, the credit ledger, intake.
export type { HouseholdAdmin } from './admin.js';
export { type CreditBalance, CreditLedger, type PoolBalance } from './CreditLedger.js';
export type { CreateInviteCodeOptions, IntakeMode } from './intake.js';
export { planningHouseholds } from './planning.js';
