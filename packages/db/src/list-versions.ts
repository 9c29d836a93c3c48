import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { BaseModel } from './model.js';

/** Names of one household-scoped table's list versions (see `listVersions`). */
export interface ListVersionsNames {
  /** The table whose rows make the list, with a `household_id` column (`meal_events`). */
  table: string;
  /** The table of versions, one row per household that has rows (`meal_event_list_versions`). */
  versions: string;
  /** The sequence the numbers come from (`meal_event_list_version_seq`). */
  sequence: string;
  /** The trigger function (`meal_event_list_bump`). */
  fn: string;
  /** Prefix of the triggers' names, `<prefix>_insert`, `_update`, `_delete`, `_truncate` (`meal_event_list`). */
  trigger: string;
}

/**
 * The TRUNCATE trigger of a list's versions (part of `listVersions` unless left out): a TRUNCATE of
 * `table` fires no row or DELETE trigger, so without it every household would keep a version
 * whose list is now empty. It removes every version (each list is empty: version 0).
 */
export function listVersionsTruncate(n: ListVersionsNames): { up(knex: Knex): Promise<void>; down(knex: Knex): Promise<void> } {
  return {
    async up(knex) {
      await knex.raw(`create function ${n.fn}_truncate() returns trigger language plpgsql as $$
    begin
      delete from ${n.versions};
      return null;
    end $$`);
      await knex.raw(`create trigger ${n.trigger}_truncate after truncate on ${n.table} for each statement execute function ${n.fn}_truncate()`);
    },
    async down(knex) {
      await knex.raw(`drop trigger if exists ${n.trigger}_truncate on ${n.table}`);
      await knex.raw(`drop function if exists ${n.fn}_truncate()`);
    },
  };
}

/**
 * A migration's `up` and `down` for a version per household's list of `table`'s rows, moved by
 * PostgreSQL itself in the statement that changes the list (statement-level triggers, whoever
 * writes: the service, a script, a cascade), so an answer cached by any instance is known to be
 * current or not by one number read with the session. Versions come from one sequence, so a number
 * is never given twice; a household without rows has no row (version 0: an empty list), so a
 * deleted household leaves nothing behind. No foreign key: a household's deletion cascades to the
 * rows, whose trigger then removes the version. A TRUNCATE removes every version
 * (`listVersionsTruncate`; `truncate: false` leaves that trigger out, as the first such migration did).
 */
export function listVersions(n: ListVersionsNames, options: { truncate?: boolean } = {}): { up(knex: Knex): Promise<void>; down(knex: Knex): Promise<void> } {
  const truncate = options.truncate === false ? undefined : listVersionsTruncate(n);
  return {
    async up(knex) {
      await knex.schema.createTable(n.versions, (t) => {
        t.uuid('household_id').primary();
        t.bigInteger('version')
          .notNullable()
          .comment(`A new number of ${n.sequence} with every statement that inserts, changes or deletes ${n.table} rows of the household`);
      });
      await knex.raw(`create sequence ${n.sequence}`);
      await knex.raw(`
    create function ${n.fn}() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into ${n.versions} (household_id, version)
          select h, nextval('${n.sequence}') from (select distinct household_id as h from new_rows) c
          on conflict (household_id) do update set version = excluded.version;
      elsif tg_op = 'UPDATE' then
        insert into ${n.versions} (household_id, version)
          select h, nextval('${n.sequence}') from (select household_id as h from new_rows union select household_id from old_rows) c
          on conflict (household_id) do update set version = excluded.version;
      else
        -- A household left without rows (its last one deleted, or the household itself) keeps no
        -- row: version 0 is then an empty list, and any other number was never given before.
        delete from ${n.versions} v
         where v.household_id in (select household_id from old_rows)
           and not exists (select 1 from ${n.table} e where e.household_id = v.household_id);
        insert into ${n.versions} (household_id, version)
          select h, nextval('${n.sequence}') from (select distinct household_id as h from old_rows) c
           where exists (select 1 from ${n.table} e where e.household_id = c.h)
          on conflict (household_id) do update set version = excluded.version;
      end if;
      return null;
    end $$`);
      await knex.raw(`create trigger ${n.trigger}_insert after insert on ${n.table} referencing new table as new_rows
                  for each statement execute function ${n.fn}()`);
      await knex.raw(`create trigger ${n.trigger}_update after update on ${n.table} referencing old table as old_rows new table as new_rows
                  for each statement execute function ${n.fn}()`);
      await knex.raw(`create trigger ${n.trigger}_delete after delete on ${n.table} referencing old table as old_rows
                  for each statement execute function ${n.fn}()`);
      await truncate?.up(knex);
    },
    async down(knex) {
      await truncate?.down(knex);
      for (const op of ['insert', 'update', 'delete']) await knex.raw(`drop trigger if exists ${n.trigger}_${op} on ${n.table}`);
      await knex.raw(`drop function if exists ${n.fn}()`);
      await knex.raw(`drop sequence if exists ${n.sequence}`);
      await knex.schema.dropTableIfExists(n.versions);
    },
  };
}

/**
 * A row of a `listVersions` table: the version of one household's list, written only by the
 * table's triggers and read with the session by the list's cache; the service never writes it.
 * Each package's model extends it with its own `tableName`.
 */
export class ListVersionModel extends BaseModel {
  static override idColumn = 'householdId';
  static override jsonSchema = {
    type: 'object',
    required: ['householdId', 'version'],
    properties: { householdId: { type: 'string', format: 'uuid' }, version: { type: 'string', pattern: '^[0-9]+$' } },
  };

  /** The household (an opaque id from @svc/households). */
  declare householdId: string;
  /** A number of the list's sequence (bigint: pg reads it as text). */
  declare version: string;
}

/**
 * Answers made from a `listVersions` list, each kept under the list version it was read at, least
 * recently used out first past `maxBytes` (key length + `size(answer)`); 0 keeps nothing. An answer
 * is handed out only to a caller that saw the same version (the one its session read lent), so a
 * change of the list, whoever made it, is never answered from here.
 */
export class VersionedAnswers<A extends {}> {
  private readonly cache: LRUCache<string, { version: string; answer: A }> | undefined;

  constructor(maxBytes: number, size: (answer: A) => number) {
    this.cache = maxBytes > 0 ? new LRUCache({ maxSize: maxBytes, sizeCalculation: (e, key) => key.length + size(e.answer) || 1 }) : undefined;
  }

  /** The answer kept for `key` when it was made at `version`. */
  get(key: string, version: string): A | undefined {
    const held = this.cache?.get(key);
    return held?.version === version ? held.answer : undefined;
  }

  /** The version the answer kept for `key` was made at, if one is kept. */
  versionOf(key: string): string | undefined {
    return this.cache?.get(key)?.version;
  }

  set(key: string, version: string, answer: A): void {
    this.cache?.set(key, { version, answer });
  }
}
