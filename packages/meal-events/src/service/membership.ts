import type { MemberDeparture, MemberErasure, MemberRoleChange, MembershipListener, Transaction } from '@svc/contracts';
import type { Knex } from 'knex';
import type { CalendarFeedStore, MealEventStore } from '../store/index.js';

/** The name a participant keeps once the person's account is deleted: a place at the table, nobody's name. */
export const FORMER_MEMBER_NAME = 'Former member';

/**
 * What meal events do when a household's membership changes (MembershipListener of
 * @svc/contracts, called by @svc/households inside the transaction of the change, so both commit
 * together). Built from this package's stores alone, so the host makes it before households.
 *
 * - A member who leaves or is removed stays a participant of the events they were at, by name
 *   (they were a person at that meal), without the link: `memberId` becomes null, as for a guest.
 *   So a GET never answers a memberId that is no longer a member, and PUT of what GET answered
 *   always passes.
 * - A deleted account's participants, in the households it belongs to and in those it left
 *   before, keep their place at the table but lose the name: `{ memberId: null, name: "Former member" }`.
 * - A member who could read the calendar feed (an Owner or Adult) and leaves, is removed, deletes
 *   their account or is made a Junior: the feed's URL is retired at once (adults make a new one),
 *   since the departed person may keep the URL.
 */
export class MealEventsMembershipListener implements MembershipListener {
  private readonly events: MealEventStore;
  private readonly feeds: CalendarFeedStore;

  constructor(options: { events: MealEventStore; feeds: CalendarFeedStore }) {
    this.events = options.events;
    this.feeds = options.feeds;
  }

  async memberDeparted(d: MemberDeparture, trx: Transaction): Promise<void> {
    const t = trx as Knex.Transaction;
    // An account being deleted is erased right after (accountErased); its links go then.
    if (d.reason !== 'account_deleted') await this.events.unlinkMember(d.householdId, d.memberId, d.at, t);
    if (d.role !== 'Junior') await this.feeds.remove(d.householdId, t);
  }

  async roleChanged(c: MemberRoleChange, trx: Transaction): Promise<void> {
    if (c.to === 'Junior' && c.from !== 'Junior') await this.feeds.remove(c.householdId, trx as Knex.Transaction);
  }

  async accountErased(e: MemberErasure, trx: Transaction): Promise<void> {
    await this.events.eraseMembers(e.members, FORMER_MEMBER_NAME, e.at, trx as Knex.Transaction);
  }
}
