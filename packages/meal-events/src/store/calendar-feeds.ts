import { type Pojo, standaloneRead } from '@svc/db';
import { loadStandalone } from '@svc/http-kit';
import type { Knex } from 'knex';
import { CalendarFeedModel } from '../models/index.js';
import { calendarFeedRead } from '../reads.js';

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
  /** The household's feed; `loaded`: the row of `calendarFeedRead` as the read kernel loaded it (`false`: none). */
  get(householdId: string, loaded?: Pojo | false): Promise<StoredCalendarFeed | undefined>;
  /** The feed whose token has this SHA-256, if it is the household's current one. */
  findByTokenHash(tokenHash: Buffer): Promise<StoredCalendarFeed | undefined>;
  /** False when the household had no feed. Given `trx`, the URL stops working when it commits. */
  remove(householdId: string, trx?: Knex.Transaction): Promise<boolean>;
}

function plain(row: CalendarFeedModel): StoredCalendarFeed {
  return { householdId: row.householdId, tokenHash: row.tokenHash, sealedToken: row.sealedToken, createdAt: row.createdAt };
}

/** GET …/calendar-feed when the kernel lent nothing: the same declared read as a statement of its own (`false`: no feed). */
const FEED = standaloneRead(calendarFeedRead);

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

  async get(householdId: string, loaded?: Pojo | false): Promise<StoredCalendarFeed | undefined> {
    const row = loaded ?? (await loadStandalone<Pojo | false>(this.Feed.knex(), FEED, { household: householdId }));
    return row ? plain(this.Feed.fromDatabaseJson(row)) : undefined;
  }

  async findByTokenHash(tokenHash: Buffer): Promise<StoredCalendarFeed | undefined> {
    const row = await this.Feed.query().findOne({ tokenHash });
    return row && plain(row);
  }

  async remove(householdId: string, trx?: Knex.Transaction): Promise<boolean> {
    return (await this.Feed.query(trx).deleteById(householdId)) > 0;
  }
}
