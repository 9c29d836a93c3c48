import type { ChangeResource } from '@svc/contracts';
import type { Knex } from 'knex';
import { HouseholdChangeCounterModel, HouseholdChangeModel } from './models/index.js';

export interface ChangeRow {
  resource: ChangeResource;
  id: string;
  change: 'upsert' | 'delete';
  at: string;
  position: string;
}

export interface ChangePage {
  rows: ChangeRow[];
  /** Positions up to here lost deletions to the cleanup: a cursor below it answers 410. */
  purgedThrough: string;
  /** The household's last position ("0" before any change). */
  last: string;
}

/** Reads the feed (keyset: `position > since`, on the (household_id, position) index) and purges old deletions. */
export class ChangesStore {
  private readonly Change: typeof HouseholdChangeModel;
  private readonly Counter: typeof HouseholdChangeCounterModel;

  constructor(private readonly knex: Knex) {
    this.Change = HouseholdChangeModel.bindKnex(knex);
    this.Counter = HouseholdChangeCounterModel.bindKnex(knex);
  }

  /** The changes after `since`, oldest first, and the household's counter, in one statement. */
  async page(householdId: string, since: string, limit: number): Promise<ChangePage> {
    const { rows } = await this.knex.raw<{ rows: { page: ChangeRow[] | null; purged_through: string | null; last: string | null }[] }>(
      `select (select json_agg(json_build_object('resource', c.resource, 'id', c.resource_id, 'change', c.change,
                 'at', to_char(c.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'position', c.position::text) order by c.position)
                 from (select * from household_changes where household_id = :h and position > :since order by position limit :limit) c) as page,
              (select purged_through::text from household_change_counters where household_id = :h and not deleted) as purged_through,
              (select last::text from household_change_counters where household_id = :h) as last`,
      { h: householdId, since, limit },
    );
    const row = rows[0]!;
    return { rows: row.page ?? [], purgedThrough: row.purged_through ?? '0', last: row.last ?? '0' };
  }

  /**
   * Forgets deletions recorded before `before` (kept 90 days): each household's `purged_through`
   * moves to the last position forgotten, so a cursor older than that answers 410. Returns how many.
   */
  async purgeDeletions(before: Date): Promise<number> {
    const { rows } = await this.knex.raw<{ rows: { n: string }[] }>(
      `with gone as (
         delete from household_changes where change = 'delete' and at < ? returning household_id, position
       ), moved as (
         update household_change_counters c set purged_through = greatest(c.purged_through, g.top)
           from (select household_id, max(position) as top from gone group by household_id) g
          where c.household_id = g.household_id and not c.deleted
       ), tombstones as (
         delete from household_change_counters where deleted
       )
       select count(*)::text as n from gone`,
      [before],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** For tests and the operator: the counter row of a household. */
  async counter(householdId: string): Promise<HouseholdChangeCounterModel | undefined> {
    return await this.Counter.query().findById(householdId);
  }

  /** For tests: every kept change of a household, oldest first. */
  async all(householdId: string): Promise<HouseholdChangeModel[]> {
    return await this.Change.query().where({ householdId }).orderBy('position');
  }
}
