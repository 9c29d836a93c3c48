import { readAheadKey, type SessionReadAhead } from '@svc/contracts';
import { isoTimestampSql } from '@svc/db';
import { readAhead } from '@svc/http-kit';
import type { Knex } from 'knex';
import { CalendarFeedModel } from '../models/index.js';

/** A household's feed as stored: never the token itself. */
export interface StoredCalendarFeed {
  householdId: string;
  tokenHash: Buffer;
  sealedToken: Buffer;
  createdAt: string;
}

/** What the calendar feed needs from storage. Time comes in as `now`; the store holds no clock. */
export interface CalendarFeedStore {
  /** Writes the household's feed, retiring the previous one (if any) in the same statement. */
  replace(householdId: string, tokenHash: Buffer, sealedToken: Buffer, now: Date): Promise<StoredCalendarFeed>;
  get(householdId: string): Promise<StoredCalendarFeed | undefined>;
  /** The feed whose token has this SHA-256, if it is the household's current one. */
  findByTokenHash(tokenHash: Buffer): Promise<StoredCalendarFeed | undefined>;
  /** False when the household had no feed. Given `trx`, the URL stops working when it commits. */
  remove(householdId: string, trx?: Knex.Transaction): Promise<boolean>;
}

function plain(row: CalendarFeedModel): StoredCalendarFeed {
  return { householdId: row.householdId, tokenHash: row.tokenHash, sealedToken: row.sealedToken, createdAt: row.createdAt };
}

/** The name of the feed read the session statement loads ahead (GET …/calendar-feed). */
const FEED_READ_AHEAD = 'meal_events_calendar_feed';

/** The stored feed as `calendarFeedReadAhead` lends it: the bytes as hex, `createdAt` as the store's own read writes it. */
interface LentFeed {
  householdId: string;
  tokenHash: string;
  sealedToken: string;
  createdAt: string;
}

/**
 * GET of the household's calendar feed as a read the session statement loads in its own round
 * trip (SessionReadAhead, a household read without `arg`, evaluated only for a member): the row
 * `get` reads, as one JSON object — the token's hash and the sealed token as hex (JSON has no
 * bytes), `createdAt` formatted by `isoTimestampSql` as pg's Date and `toISOString` would — or
 * JSON `false` when the household has no feed, read in the same snapshot, so that the 404 costs
 * no statement of its own either. Only the Owner and Adults see the URL: the service checks the
 * role (from the session's memberships) before it asks the store.
 */
export const calendarFeedReadAhead: SessionReadAhead = {
  name: FEED_READ_AHEAD,
  path: '/api/v1/households/{householdId}/calendar-feed',
  select: (_accountId, id) =>
    `coalesce((select json_build_object('householdId', f.household_id, 'tokenHash', encode(f.token_hash, 'hex'),
                                        'sealedToken', encode(f.sealed_token, 'hex'), 'createdAt', ${isoTimestampSql('f.created_at')})
                 from calendar_feeds f where f.household_id = ${id}), 'false'::json)`,
};

/** CalendarFeedStore on Objection: CalendarFeedModel bound to the knex the host hands in. */
export class ObjectionCalendarFeedStore implements CalendarFeedStore {
  private readonly Feed: typeof CalendarFeedModel;

  constructor(knex: Knex) {
    this.Feed = CalendarFeedModel.bindKnex(knex);
  }

  async replace(householdId: string, tokenHash: Buffer, sealedToken: Buffer, now: Date): Promise<StoredCalendarFeed> {
    // One upsert on the household key (Objection has none of its own): parallel POSTs leave one row,
    // the last one written, and the old token's hash is gone the moment this commits.
    const rows = await this.Feed.knex()('calendarFeeds')
      .insert({ householdId, tokenHash, sealedToken, createdAt: now })
      .onConflict('householdId')
      .merge(['tokenHash', 'sealedToken', 'createdAt'])
      .returning('*');
    return plain(this.Feed.fromDatabaseJson(rows[0]));
  }

  async get(householdId: string): Promise<StoredCalendarFeed | undefined> {
    // A member's GET: the session read loaded it ahead (no statement of its own), or found none.
    const lent = readAhead(FEED_READ_AHEAD, readAheadKey(householdId)) as LentFeed | false | undefined;
    if (lent === false) return undefined;
    if (lent) {
      return {
        householdId: lent.householdId,
        tokenHash: Buffer.from(lent.tokenHash, 'hex'),
        sealedToken: Buffer.from(lent.sealedToken, 'hex'),
        createdAt: lent.createdAt,
      };
    }
    const row = await this.Feed.query().findById(householdId);
    return row && plain(row);
  }

  async findByTokenHash(tokenHash: Buffer): Promise<StoredCalendarFeed | undefined> {
    const row = await this.Feed.query().findOne({ tokenHash });
    return row && plain(row);
  }

  async remove(householdId: string, trx?: Knex.Transaction): Promise<boolean> {
    return (await this.Feed.query(trx).deleteById(householdId)) > 0;
  }
}
