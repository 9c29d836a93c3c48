import { createHash } from 'node:crypto';
import type { ChangeResource } from '@svc/contracts';
import { compileRead, isoTimestampSql, type ReadDeclaration } from '@svc/db';
import { type PreparedStatement, preparedQuery } from '@svc/http-kit';
import type { Knex } from 'knex';
import { HouseholdChangeCounterModel, HouseholdChangeModel } from './models/index.js';

export interface ChangeRow {
  resource: ChangeResource;
  id: string;
  change: 'upsert' | 'delete';
  at: string;
  position: string;
  /**
   * An upsert's value, as the resource's own GET answers it (its owner's `ChangeValueRead`, read in
   * the page's statement); undefined for a deletion, a kind without a value read, or a resource
   * gone (not possible within one statement's snapshot, handled all the same).
   */
  value?: unknown;
}

/**
 * How the page's statement reads one kind of resource's `value`, lent by the package that owns it
 * (handed in by the host): its declared read of one row of the household (`@svc/db` declareRead,
 * household scope, keyed by the resource id through `arg`; the household's own read has no `arg`),
 * and how that package makes such a row into its GET's answer (what its route does with the row the
 * read kernel lends it). The feed writes no SQL naming the owner's table: `@svc/db`'s compiler does.
 */
export interface ChangeValueRead {
  /**
   * One row of the household: household scope, `arg` the resource id (uuid), or none for the
   * household itself. A read whose absence its GET answers (`absentIsAnswer`) is compiled here
   * without it: the value of a row gone since its upsert is null.
   */
  readonly read: ReadDeclaration;
  /** The row (as the read kernel would lend it to the GET) made into the GET's answer. */
  answer(row: unknown): unknown;
}

/** One ChangeValueRead per kind of resource. */
export type ChangeValueReads = Readonly<Record<ChangeResource, ChangeValueRead>>;

export interface ChangePage {
  rows: ChangeRow[];
  /** Positions up to here lost deletions to the cleanup: a cursor below it answers 410. */
  purgedThrough: string;
  /** The household's last position ("0" before any change). */
  last: string;
  /** The counter's version (`last.purgedThrough`, "0" before any change), read in the page's snapshot: what `changesRead` loads. */
  version: string;
  /**
   * Whether the page's values depend only on rows whose every change moves the counter: false when
   * an upsert's value borrows a field of another package (a member's account name) whose changes
   * are not recorded (`ChangesStoreOptions.linksRecorded`), so such a page must not be answered again.
   */
  keepable: boolean;
}

/** What the host tells a ChangesStore about the triggers it runs. */
export interface ChangesStoreOptions {
  /**
   * Whether every field the values borrow from another package is recorded when it changes (the
   * host runs `linkMigrations` of the same values): then every page is keepable. Default false:
   * a page holding a borrowing upsert is not kept.
   */
  readonly linksRecorded?: boolean;
}

/** Reads the feed (keyset: `position > since`, on the (household_id, position) index) and purges old deletions. */
export class ChangesStore {
  private readonly Change: typeof HouseholdChangeModel;
  private readonly Counter: typeof HouseholdChangeCounterModel;

  private readonly pageStatement: Omit<PreparedStatement, 'values'>;
  /** Kinds whose value borrows another package's field (a link): a page holding one is not kept. */
  private readonly borrowing: Set<ChangeResource>;

  /**
   * `values`: each kind's value read (the page's statement reads them); a kind left out pages
   * without values. `options.linksRecorded`: the host runs `linkMigrations` of these same values,
   * so a borrowed field's change is recorded (and moves the version) like any other change.
   */
  constructor(
    private readonly knex: Knex,
    private readonly values: Partial<ChangeValueReads> = {},
    options: ChangesStoreOptions = {},
  ) {
    this.Change = HouseholdChangeModel.bindKnex(knex);
    this.Counter = HouseholdChangeCounterModel.bindKnex(knex);
    this.pageStatement = pageStatement(values);
    this.borrowing = new Set(
      options.linksRecorded
        ? []
        : (Object.entries(values) as [ChangeResource, ChangeValueRead][])
            .filter(([, v]) => v.read.fields.some((f) => typeof f !== 'string' && 'link' in f))
            .map(([resource]) => resource),
    );
  }

  /**
   * The changes after `since`, oldest first, each upsert with its value, and the household's
   * counter: one prepared statement (an ordered range scan of the (household, position) index;
   * each value one lookup by its key, compiled from its owner's declared read).
   */
  async page(householdId: string, since: string, limit: number): Promise<ChangePage> {
    const [row] = await preparedQuery<{
      page: (ChangeRow & { row?: unknown })[] | null;
      purged_through: string | null;
      last: string | null;
      version: string | null;
    }>(this.knex, {
      ...this.pageStatement,
      values: [householdId, since, limit],
    });
    const rows: ChangeRow[] = (row?.page ?? []).map(({ row: lent, ...change }) =>
      lent === null || lent === undefined ? change : { ...change, value: this.values[change.resource]!.answer(lent) },
    );
    const keepable = !rows.some((r) => r.change === 'upsert' && this.borrowing.has(r.resource));
    return { rows, purgedThrough: row?.purged_through ?? '0', last: row?.last ?? '0', version: row?.version ?? '0', keepable };
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

/**
 * The page's statement text: `$1` the household, `$2` the position after which, `$3` the limit.
 * Each kind's value is its declared read compiled by `@svc/db` (aliases of the compiler's own
 * making), bound to the page's household and the change's resource id, evaluated only for an upsert
 * of that kind (one primary-key lookup per row of the page).
 */
function pageStatement(values: Partial<ChangeValueReads>): Omit<PreparedStatement, 'values'> {
  const kinds = Object.entries(values) as [ChangeResource, ChangeValueRead][];
  const lookups = kinds.map(([resource, v], i) => {
    if (
      !('household' in v.read.scope) ||
      v.read.list ||
      v.read.version ||
      v.read.withHousehold ||
      v.read.withAccount ||
      (v.read.arg && v.read.arg.format !== 'uuid')
    )
      throw new Error(`changes: the value read of ${resource} (${v.read.name}) must read one row of the household by its uuid`);
    // A row gone since its upsert has no value (null), whatever its GET answers for an absent row.
    const read = v.read.absentIsAnswer ? { ...v.read, absentIsAnswer: false } : v.read;
    return `when '${resource}' then ${compileRead(read, { account: 'null', household: '$1::uuid', arg: 'c.resource_id', known: 'null' }, i)}`;
  });
  // `since` and `limit` as init plans: their values never reach the planner, so the prepared statement's
  // one generic plan (the same index-only range scan) is used instead of planning every page again.
  const value = lookups.length ? `, 'row', case when c.change = 'upsert' then case c.resource ${lookups.join(' ')} end end` : '';
  const text = `select (select json_agg(json_build_object('resource', c.resource, 'id', c.resource_id, 'change', c.change,
           'at', ${isoTimestampSql('c.at')}, 'position', c.position::text${value}) order by c.position)
         from (select resource, resource_id, change, at, position from household_changes
                where household_id = $1::uuid and position > (select $2::bigint) order by position limit (select $3::int)) c) as page,
       case when not k.deleted then k.purged_through::text end as purged_through, k.last::text as last, k.version
  from (select 1) one left join household_change_counters k on k.household_id = $1::uuid`;
  return { name: `changes_page_${createHash('sha256').update(text).digest('hex').slice(0, 12)}`, text };
}
