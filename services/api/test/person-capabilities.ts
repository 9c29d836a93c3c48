import type { AccountDeletionStep, ExportRecord, PersonalDataSources, Transaction } from '@svc/contracts';
import { ConflictError, NotFoundError } from '@svc/http-kit';
import type { Knex } from 'knex';

/**
 * Small but real stand-ins, over the test database, for the parts of account deletion and the
 * export that households, meal rules, meal events and push provide (they are wired at merge, see
 * TODO(lead) in src/service.ts). They follow the contracts' rules: the households step refuses an
 * Owner whose household has other members, removes the person's memberships and every household
 * where they were the only member (its foreign keys take its events, invitations, threads and
 * credits; its rules have none and are deleted with it), and the person's welcome bundle.
 */
export function testPersonCapabilities(knex: Knex): { deletionSteps: AccountDeletionStep[]; personalData: PersonalDataSources } {
  const households: AccountDeletionStep = {
    async deleteAccountData(userId: string, t: Transaction) {
      const trx = t as Knex.Transaction;
      const owned = await trx.raw(
        `select 1 from household_members m
          where m.user_id = ? and m.role = 'Owner'
            and exists (select 1 from household_members o where o.household_id = m.household_id and o.id <> m.id)
          limit 1`,
        [userId],
      );
      if (owned.rows.length > 0) throw new ConflictError('owner_must_transfer', 'Hand the household over to another adult first');
      const alone: { householdId: string }[] = await trx('householdMembers as m')
        .select('m.householdId')
        .where('m.userId', userId)
        .whereNotExists((q) => q.select(1).from('householdMembers as o').whereRaw('o.household_id = m.household_id').whereRaw('o.id <> m.id'));
      const ids = alone.map((r) => r.householdId);
      if (ids.length > 0) {
        await trx('mealRules').whereIn('householdId', ids).delete();
        await trx('households').whereIn('id', ids).delete();
      }
      await trx('householdMembers').where({ userId }).delete();
      await trx('welcomeBundles').where({ userId }).delete();
      await trx('intakeCodeRedemptions').where({ userId }).delete();
    },
  };
  const push: AccountDeletionStep = {
    async deleteAccountData(userId: string, t: Transaction) {
      await (t as Knex.Transaction)('pushDevices').where({ userId }).delete();
    },
  };
  const personalData: PersonalDataSources = {
    async household(householdId) {
      const household = await knex('households').select('id', 'name', 'timeZoneId').where({ id: householdId }).first();
      if (!household) throw new NotFoundError();
      const members: ExportRecord[] = await knex('householdMembers').select('id as memberId', 'userId', 'role').where({ householdId }).orderBy('createdAt');
      return { household, members };
    },
    rules: (householdId) => knex('mealRules').select('id', 'payload').where({ householdId }).orderBy('createdAt'),
    async *events(householdId) {
      let after = '00000000-0000-0000-0000-000000000000';
      for (;;) {
        const page: ExportRecord[] = await knex('mealEvents').select('id', 'notes').where({ householdId }).where('id', '>', after).orderBy('id').limit(2);
        if (page.length === 0) return;
        yield page;
        after = String(page[page.length - 1]!.id);
      }
    },
    devices: (userId) => knex('pushDevices').select('token', 'platform').where({ userId }).orderBy('token'),
  };
  return { deletionSteps: [households, push], personalData };
}
