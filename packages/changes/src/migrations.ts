import type { ChangeResource, ChangeSource } from '@svc/contracts';
import { columnOf, type Migration, type MigrationSet, type ReadDeclaration } from '@svc/db';
import { createQueueMigration } from '@svc/jobs';
import type { Knex } from 'knex';

/** The feed's tables and the one function every source's triggers call. */
export const migrations: MigrationSet = {
  name: 'changes',
  migrations: [
    {
      name: '20261127200000_create_household_changes',
      up: async (knex: Knex) => {
        await knex.raw(`
          create table household_change_counters (
            household_id uuid primary key,
            last bigint not null,
            purged_through bigint not null default 0,
            deleted boolean not null default false
          )`);
        await knex.raw(
          `comment on table household_change_counters is 'One row per household with changes: the last position given (moved under this row''s lock, so positions follow commit order) and the position up to which deletions were purged (older cursors answer 410)'`,
        );
        await knex.raw(`
          create table household_changes (
            household_id uuid not null,
            resource text not null check (resource in ('household', 'member', 'rule', 'event')),
            resource_id uuid not null,
            change text not null check (change in ('upsert', 'delete')),
            at timestamptz not null,
            position bigint not null,
            primary key (household_id, resource, resource_id)
          )`);
        await knex.raw(
          `comment on table household_changes is 'The latest change of each resource of a household (one row per resource: a later change moves it to a later position)'`,
        );
        await knex.raw('create unique index household_changes_position_idx on household_changes (household_id, position)');
        await knex.raw(`create index household_changes_deleted_idx on household_changes (at) where change = 'delete'`);
        // Records the changes of one statement: per household (in id order, so two statements never
        // wait on each other's counters in opposite orders) the counter row is moved under its row
        // lock, held to the end of the writing transaction. The next writer of the household waits
        // for that commit before taking its own positions, so a position is visible only once every
        // smaller one of the household is: a reader never sees 5 before 4 commits, and a rolled-back
        // transaction gives its positions back (no gaps).
        await knex.raw(`
          create function household_changes_record(p_resource text, p_households uuid[], p_ids uuid[], p_change text) returns void
          language plpgsql as $$
          declare
            h uuid;
            n bigint;
            top bigint;
          begin
            for h, n in
              select hh, count(distinct id) from unnest(p_households, p_ids) as t(hh, id) where hh is not null group by hh order by hh
            loop
              top := null;
              insert into household_change_counters as c (household_id, last) values (h, n)
                on conflict (household_id) do update set last = c.last + excluded.last where not c.deleted
                returning c.last into top;
              -- The household is being deleted (its rows go by cascade): nothing to tell anyone.
              continue when top is null;
              insert into household_changes as x (household_id, resource, resource_id, change, at, position)
                select h, p_resource, d.id, p_change, clock_timestamp(), top - n + row_number() over (order by d.id)
                  from (select distinct t.id from unnest(p_households, p_ids) as t(hh, id) where t.hh = h) d
                on conflict (household_id, resource, resource_id)
                do update set change = excluded.change, at = excluded.at, position = excluded.position;
            end loop;
          end $$`);
      },
      down: async (knex: Knex) => {
        await knex.raw('drop function if exists household_changes_record(text, uuid[], uuid[], text)');
        await knex.raw('drop table if exists household_changes');
        await knex.raw('drop table if exists household_change_counters');
      },
    },
    {
      // A page is an index-only ordered range scan: the (household, position) index carries every
      // column the page reads (docs/benchmarks.md, "The changes feed").
      name: '20261128090000_household_changes_page_index',
      up: async (knex: Knex) => {
        await knex.raw(
          'create unique index household_changes_page_idx on household_changes (household_id, position) include (resource, resource_id, change, at)',
        );
        await knex.raw('drop index household_changes_position_idx');
      },
      down: async (knex: Knex) => {
        await knex.raw('create unique index household_changes_position_idx on household_changes (household_id, position)');
        await knex.raw('drop index household_changes_page_idx');
      },
    },
    {
      // The counter's state as one value the session's statement can read ahead (`changesRead`):
      // it moves with every recorded change and with every purge, so a page made at one version is
      // the page at that version on any instance.
      name: '20261202100000_household_change_counters_version',
      up: async (knex: Knex) => {
        await knex.raw(`alter table household_change_counters add column version text generated always as (last::text || '.' || purged_through::text) stored`);
        await knex.raw(
          `comment on column household_change_counters.version is 'last.purged_through: read with the session, so an empty poll needs no statement and a page read again at an unchanged version is the one rendered before'`,
        );
      },
      down: async (knex: Knex) => {
        await knex.raw('alter table household_change_counters drop column version');
      },
    },
    {
      // The planner's resources (dishes and plans) join the feed.
      name: '20261202100200_household_changes_dish_and_plan',
      up: async (knex: Knex) => {
        await knex.raw('alter table household_changes drop constraint household_changes_resource_check');
        await knex.raw(
          `alter table household_changes add constraint household_changes_resource_check check (resource in ('household', 'member', 'rule', 'event', 'dish', 'plan'))`,
        );
      },
      down: async (knex: Knex) => {
        await knex.raw(`delete from household_changes where resource in ('dish', 'plan')`);
        await knex.raw('alter table household_changes drop constraint household_changes_resource_check');
        await knex.raw(
          `alter table household_changes add constraint household_changes_resource_check check (resource in ('household', 'member', 'rule', 'event'))`,
        );
      },
    },
  ],
};

const IDENT = /^[a-z_][a-z0-9_]*$/;

function sourceMigration(source: ChangeSource): Migration {
  const { resource } = source;
  const table = source.model.tableName;
  if (!IDENT.test(table)) throw new Error(`changes: ${JSON.stringify(table)} is not a plain SQL name`);
  const id = columnOf(source.id ?? 'id');
  const household = columnOf(source.household);
  const fn = `household_changes_of_${table}`;
  // The households table itself: its deletion takes its feed with it. The cascades to its rows may
  // run after this trigger, so the counter stays as a tombstone that refuses their records until
  // the transaction commits, when a deferred trigger removes it (nothing of the household is left).
  const isHousehold = resource === 'household';
  const onDelete = isHousehold
    ? `delete from household_changes where household_id in (select ${id} from old_rows);
       insert into household_change_counters (household_id, last, deleted) select ${id}, 0, true from old_rows
         on conflict (household_id) do update set deleted = true;`
    : `perform household_changes_record('${resource}', array(select ${household} from old_rows), array(select ${id} from old_rows), 'delete');`;
  return {
    name: `20261127200100_changes_${table}`,
    up: async (knex: Knex) => {
      await knex.raw(`
        create function ${fn}() returns trigger language plpgsql as $$
        begin
          if tg_op = 'DELETE' then
            ${onDelete}
          else
            perform household_changes_record('${resource}', array(select ${household} from new_rows), array(select ${id} from new_rows), 'upsert');
          end if;
          return null;
        end $$`);
      await knex.raw(`create trigger ${fn}_insert after insert on ${table} referencing new table as new_rows for each statement execute function ${fn}()`);
      await knex.raw(`create trigger ${fn}_update after update on ${table} referencing new table as new_rows for each statement execute function ${fn}()`);
      await knex.raw(`create trigger ${fn}_delete after delete on ${table} referencing old table as old_rows for each statement execute function ${fn}()`);
      if (isHousehold) {
        await knex.raw(`
          create function ${fn}_gone() returns trigger language plpgsql as $$
          begin
            delete from household_changes where household_id = old.${id};
            delete from household_change_counters where household_id = old.${id} and deleted;
            return null;
          end $$`);
        await knex.raw(
          `create constraint trigger ${fn}_gone after delete on ${table} deferrable initially deferred for each row execute function ${fn}_gone()`,
        );
      }
      // What exists already is in the feed from the start (as upserts), so a client that reads
      // from the beginning gets every resource, not only those written after this migration.
      await knex.raw(
        `select household_changes_record('${resource}', array(select ${household} from ${table} order by ${id}), array(select ${id} from ${table} order by ${id}), 'upsert')`,
      );
    },
    down: async (knex: Knex) => {
      for (const op of ['insert', 'update', 'delete', 'gone']) await knex.raw(`drop trigger if exists ${fn}_${op} on ${table}`);
      await knex.raw(`drop function if exists ${fn}_gone()`);
      await knex.raw(`drop function if exists ${fn}()`);
    },
  };
}

/**
 * The triggers that record every write of the declared tables (each owning package declares its
 * `changeSources`), as a migration set run after every package's own migrations (the tables must
 * exist) and after `migrations`. Its own history (`knex_migrations_changes_sources`).
 */
export function sourceMigrations(sources: readonly ChangeSource[]): MigrationSet {
  return { name: 'changes_sources', migrations: sources.map(sourceMigration) };
}

function linkMigration(
  resource: ChangeResource,
  read: ReadDeclaration,
  link: { name: string; link: { model: ReadDeclaration['model']; key: string; field: string; aggregate?: 'count' }; by: string },
): Migration {
  if (!('household' in read.scope)) throw new Error(`changes: the value read of ${resource} (${read.name}) must be a household's`);
  const lender = link.link.model.tableName;
  const borrower = read.model.tableName;
  const key = columnOf(link.link.key);
  const field = columnOf(link.link.field);
  const by = columnOf(link.by);
  const household = columnOf(read.scope.household);
  // The household's own read has no argument: its row's id is the household's.
  const id = columnOf(read.arg?.column ?? read.scope.household);
  for (const name of [lender, borrower, key, field, by, household, id])
    if (!IDENT.test(name)) throw new Error(`changes: ${JSON.stringify(name)} is not a plain SQL name`);
  const fn = `household_changes_link_${resource}_${lender}_${link.link.aggregate ? 'count' : field}`;
  // PostgreSQL cuts names at 63 bytes: the function and its triggers (`_update`, `_insdel`) must fit.
  if (fn.length > 56) throw new Error(`changes: ${fn} is too long a name for PostgreSQL`);
  const rows = (row: 'old' | 'new') => `b.${by} = ${row}.${key}`;
  // The borrowing rows of the lent row before and after the write (OLD is null on an insert, NEW on a delete).
  const borrowing = (column: string) => `array(select b.${column} from ${borrower} b where ${rows('old')} or ${rows('new')} order by b.${id})`;
  // A count of rows (aggregate) moves with every insert and delete; a field with its rows' updates (and a row gone or come).
  const changed = link.link.aggregate
    ? `old.${key} is distinct from new.${key}`
    : `old.${field} is distinct from new.${field} or old.${key} is distinct from new.${key}`;
  const watched = link.link.aggregate ? key : `${key}, ${field}`;
  return {
    name: `20261202150000_changes_link_${resource}_${lender}_${link.link.aggregate ? 'count' : field}`,
    up: async (knex: Knex) => {
      await knex.raw(`
        create function ${fn}() returns trigger language plpgsql as $$
        begin
          perform household_changes_record('${resource}', ${borrowing(household)}, ${borrowing(id)}, 'upsert');
          return null;
        end $$`);
      await knex.raw(`create trigger ${fn}_update after update of ${watched} on ${lender} for each row when (${changed}) execute function ${fn}()`);
      await knex.raw(`create trigger ${fn}_insdel after insert or delete on ${lender} for each row execute function ${fn}()`);
    },
    down: async (knex: Knex) => {
      for (const op of ['update', 'insdel']) await knex.raw(`drop trigger if exists ${fn}_${op} on ${lender}`);
      await knex.raw(`drop function if exists ${fn}()`);
    },
  };
}

/**
 * The triggers that record a change of a field a value borrows from another package (a member's
 * account name, a `link` of its declared read) as an upsert of every resource that borrows it,
 * in the lending statement's transaction: so such a change reaches the feed and moves the
 * household's version like any other. Handed the same value reads as `ChangesStore` (only `read` is
 * used); run after `sourceMigrations` (the lending and borrowing tables must exist). History:
 * `knex_migrations_changes_links`.
 */
export function linkMigrations(values: Partial<Record<ChangeResource, { readonly read: ReadDeclaration }>>): MigrationSet {
  const made: Migration[] = [];
  for (const [resource, value] of Object.entries(values) as [ChangeResource, { readonly read: ReadDeclaration }][])
    for (const f of value.read.fields) if (typeof f !== 'string' && 'link' in f) made.push(linkMigration(resource, value.read, f));
  return { name: 'changes_links', migrations: made };
}

/** This package's queue in @svc/jobs (the purge of old deletions): run after @svc/jobs' own migrations. */
export const queues: MigrationSet = {
  name: 'changes_queues',
  migrations: [createQueueMigration('20261127200200_changes_purge_queue', 'changes-purge', { expireInSeconds: 600 })],
};
