import { columnOf, type Migration, type MigrationSet } from '@svc/db';
import type { Knex } from 'knex';
import { JOBS_SCHEMA } from './migrations.js';

/**
 * A declared enqueue-on-write: "a row written to my model's table enqueues a job on `queue`",
 * named by the model and its properties as a declared read is.
 * The owning package declares it as data (next to its migrations, as `changeSources` are declared
 * for @svc/changes); @svc/jobs, the one owner of pg-boss's SQL, turns it into a statement-level
 * trigger (`sourceMigrations`) whose INSERT into pg-boss's job table runs inside the writing
 * statement: the job exists exactly when the row does, with no statement of its own.
 */
export interface JobSource {
  /** The model whose table enqueues (its `tableName`), as a declared read names it. */
  model: { readonly tableName: string };
  /** The queue (created by the owning package's `createQueueMigration`, before this runs). */
  queue: string;
  /** The job's data: each key is filled with the value of the row's property named (`{ id: 'id' }`). */
  payload: Readonly<Record<string, string>>;
  /**
   * A `timestamptz` property: the job is due at its value (pg-boss's `start_after`) and the day's
   * limit counts from it. None: due at once, counted from the database's `now()`.
   */
  due?: string;
  /**
   * Without `due`: a `timestamptz` property holding the service's time of the write (its injected
   * clock); the job is due at once and the day's limit counts from this value.
   */
  countFrom?: string;
  /** Only rows where this property is not null enqueue a job. */
  whenNotNull?: string;
  /**
   * Only rows whose `due` is later than this property's value: a `timestamptz` the writer sets to
   * the service's time of the write (its injected clock), so "still ahead when written" is judged
   * by the service's clock, not the database's.
   */
  onlyAfter?: string;
  /** Also on UPDATE: a row whose value of one of these properties changed enqueues a job (joined to its old row by `id`). */
  onUpdateOf?: readonly string[];
  /** The primary key's property, for `onUpdateOf` (default `id`). */
  id?: string;
  /**
   * With `onUpdateOf`: the UPDATE trigger is a row trigger whose WHEN compares the columns, so an
   * UPDATE that changes none of them does no work at all (no transition rows kept, no function
   * run), and one that does enqueues a job per changed row. For a table updated often, a row at a
   * time, for other reasons (a household's settings); the statement trigger (the default) suits
   * updates of many rows at once.
   */
  rowLevelUpdate?: boolean;
  /** Rows inserted enqueue a job too (default true; false: no INSERT trigger, for a source that no inserted row can satisfy). */
  onInsert?: boolean;
  /**
   * Rows already in the table when the trigger is installed enqueue a job too (those passing the
   * other conditions) when these properties are null (e.g. mail not yet sent nor given up).
   */
  backfillWhenNull?: readonly string[];
}

/** A JobSource in its table's own names: what the triggers are written in. */
interface ColumnSource {
  table: string;
  queue: string;
  payload: Readonly<Record<string, string>>;
  dueColumn?: string;
  countFrom?: string;
  whenNotNull?: string;
  onlyAfter?: string;
  onUpdateOf?: readonly string[];
  idColumn: string;
  rowLevelUpdate?: boolean;
  onInsert?: boolean;
  backfillWhenNull?: readonly string[];
}

/** The declaration's properties as their columns (`columnOf` of @svc/db: the read kernel's names). */
function columnsOf(source: JobSource): ColumnSource {
  const c = (property: string | undefined) => (property === undefined ? undefined : columnOf(property));
  return {
    table: ident(source.model.tableName),
    queue: source.queue,
    payload: Object.fromEntries(Object.entries(source.payload).map(([key, property]) => [key, columnOf(property)])),
    dueColumn: c(source.due),
    countFrom: c(source.countFrom),
    whenNotNull: c(source.whenNotNull),
    onlyAfter: c(source.onlyAfter),
    onUpdateOf: source.onUpdateOf?.map(columnOf),
    idColumn: columnOf(source.id ?? 'id'),
    rowLevelUpdate: source.rowLevelUpdate,
    onInsert: source.onInsert,
    backfillWhenNull: source.backfillWhenNull?.map(columnOf),
  };
}

const IDENT = /^[a-z_][a-z0-9_]*$/;

function ident(name: string): string {
  if (!IDENT.test(name)) throw new Error(`jobs: ${JSON.stringify(name)} is not a plain SQL name`);
  return name;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * The INSERT a trigger runs for the rows of `rows` (a transition table alias `r`). It follows
 * pg-boss 10.4's `insertJobs` (src/plans.js): the queue's row supplies the policy, expiry,
 * retention, retry settings and dead letter; the data is the envelope JobQueue reads
 * (`{ p: payload, a: 1, f: first due }`). A pg-boss upgrade re-reads plans.js against this (the
 * test "a job made by a declared trigger is fetched and completed by pg-boss" runs it through
 * pg-boss's own fetch and complete).
 */
function insertSql(source: ColumnSource, rows: string, extraWhere: string): string {
  const s = JOBS_SCHEMA;
  const payload = Object.entries(source.payload)
    .map(([key, column]) => `${literal(key)}, r.${ident(column)}`)
    .join(', ');
  const due = source.dueColumn ? `r.${ident(source.dueColumn)}` : 'now()';
  const first = source.dueColumn ? due : source.countFrom ? `r.${ident(source.countFrom)}` : 'now()';
  const conditions = [
    source.whenNotNull ? `r.${ident(source.whenNotNull)} is not null` : undefined,
    source.onlyAfter && source.dueColumn ? `${due} > r.${ident(source.onlyAfter)}` : undefined,
    extraWhere || undefined,
  ].filter(Boolean);
  return `
    insert into ${s}.job (id, name, data, priority, start_after, singleton_key, singleton_on, dead_letter,
                          expire_in, keep_until, retry_limit, retry_delay, retry_backoff, policy)
    select gen_random_uuid(), q.name,
           jsonb_build_object('p', jsonb_build_object(${payload}), 'a', 1,
                              'f', to_char((${first}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
           0, ${due}, null, null, q.dead_letter,
           coalesce(q.expire_seconds * interval '1s', interval '15 minutes'),
           ${due} + cast(coalesce((q.retention_minutes * 60)::text, '14 days') as interval),
           coalesce(q.retry_limit, 2),
           case when coalesce(q.retry_backoff, false) then greatest(coalesce(q.retry_delay, 0), 1) else coalesce(q.retry_delay, 0) end,
           coalesce(q.retry_backoff, false), q.policy
      from ${rows} join ${s}.queue q on q.name = ${literal(source.queue)}
     ${conditions.length ? `where ${conditions.join(' and ')}` : ''}
    on conflict do nothing`;
}

function triggerName(source: ColumnSource): string {
  return `jobs_enqueue_${ident(source.table)}_${source.queue.replace(/[^a-z0-9]+/g, '_')}`;
}

function sourceMigration(declared: JobSource): Migration {
  const source = columnsOf(declared);
  const fn = triggerName(source);
  const table = source.table;
  const id = ident(source.idColumn);
  const changed = (source.onUpdateOf ?? []).map((c) => `r.${ident(c)} is distinct from o.${ident(c)}`).join(' or ');
  if (source.rowLevelUpdate) return rowLevelMigration(source, fn, table);
  return {
    name: fn,
    up: async (knex: Knex) => {
      await knex.raw(`
        create function ${fn}() returns trigger language plpgsql as $$
        begin
          if tg_op = 'INSERT' then
            ${insertSql(source, 'new_rows r', '')};
          else
            ${changed ? insertSql(source, `new_rows r join old_rows o on o.${id} = r.${id}`, `(${changed})`) : 'null'};
          end if;
          return null;
        end $$`);
      // Statement-level: one INSERT into the queue per writing statement, however many rows it wrote
      // (a series' extension writes hundreds), and the same work whether it wrote rows or none.
      await knex.raw(`create trigger ${fn}_insert after insert on ${table} referencing new table as new_rows for each statement execute function ${fn}()`);
      if (source.backfillWhenNull) {
        const pending = source.backfillWhenNull.map((c) => `r.${ident(c)} is null`).join(' and ');
        await knex.raw(insertSql(source, `${table} r`, pending));
      }
      if (changed)
        await knex.raw(
          `create trigger ${fn}_update after update on ${table} referencing old table as old_rows new table as new_rows for each statement execute function ${fn}()`,
        );
    },
    down: async (knex: Knex) => {
      await knex.raw(`drop trigger if exists ${fn}_insert on ${table}`);
      await knex.raw(`drop trigger if exists ${fn}_update on ${table}`);
      await knex.raw(`drop function if exists ${fn}()`);
    },
  };
}

/**
 * A source whose UPDATE trigger is a row trigger (`rowLevelUpdate`): `FOR EACH ROW WHEN (old.c IS
 * DISTINCT FROM new.c OR …)`, its function inserting the job of the one row (`new`); the INSERT
 * trigger, unless `onInsert` is false, is the statement trigger as for every source.
 */
function rowLevelMigration(source: ColumnSource, fn: string, table: string): Migration {
  const columns = source.onUpdateOf ?? [];
  if (!columns.length) throw new Error(`jobs: ${table}: rowLevelUpdate needs onUpdateOf`);
  const when = columns.map((c) => `old.${ident(c)} is distinct from new.${ident(c)}`).join(' or ');
  const insertTrigger = source.onInsert !== false;
  return {
    name: fn,
    up: async (knex: Knex) => {
      if (insertTrigger) {
        await knex.raw(`
          create function ${fn}() returns trigger language plpgsql as $$
          begin
            ${insertSql(source, 'new_rows r', '')};
            return null;
          end $$`);
        await knex.raw(`create trigger ${fn}_insert after insert on ${table} referencing new table as new_rows for each statement execute function ${fn}()`);
      }
      await knex.raw(`
        create function ${fn}_row() returns trigger language plpgsql as $$
        begin
          ${insertSql(source, '(select new.*) r', '')};
          return null;
        end $$`);
      await knex.raw(`create trigger ${fn}_update after update on ${table} for each row when (${when}) execute function ${fn}_row()`);
      if (source.backfillWhenNull) {
        const pending = source.backfillWhenNull.map((c) => `r.${ident(c)} is null`).join(' and ');
        await knex.raw(insertSql(source, `${table} r`, pending));
      }
    },
    down: async (knex: Knex) => {
      await knex.raw(`drop trigger if exists ${fn}_insert on ${table}`);
      await knex.raw(`drop trigger if exists ${fn}_update on ${table}`);
      await knex.raw(`drop function if exists ${fn}()`);
      await knex.raw(`drop function if exists ${fn}_row()`);
    },
  };
}

/**
 * The triggers of the declared job sources, as a migration set run after every package's own
 * migrations and queues (the tables and queues must exist). Its own history (`knex_migrations_jobs_sources`).
 */
export function sourceMigrations(sources: readonly JobSource[]): MigrationSet {
  return { name: 'jobs_sources', migrations: sources.map(sourceMigration) };
}
