import { randomUUID } from 'node:crypto';
import type { HouseholdAccess, HouseholdRole } from '@svc/contracts';
import { NotFoundError } from '@svc/http-kit';
import type { Knex } from 'knex';

/** HouseholdAccess over a map household → user → role, standing in for @svc/households. */
export class MemoryAccess implements HouseholdAccess {
  readonly members = new Map<string, Map<string, HouseholdRole>>();

  set(householdId: string, userId: string, role: HouseholdRole): this {
    const m = this.members.get(householdId) ?? new Map<string, HouseholdRole>();
    m.set(userId, role);
    this.members.set(householdId, m);
    return this;
  }

  async roleOf(userId: string, householdId: string): Promise<HouseholdRole> {
    const role = this.members.get(householdId)?.get(userId);
    if (!role) throw new NotFoundError('not_found', 'No such household');
    return role;
  }
}

export interface SeedEvent {
  id?: string;
  date: string;
  servingTime?: string;
  eventType?: string;
}

/** Writes events straight into the table (fast set-up for paging tests); returns their ids. */
export async function seed(knex: Knex, householdId: string, events: SeedEvent[]): Promise<string[]> {
  const now = new Date('2026-11-22T09:00:00.000Z');
  const rows = events.map((e) => ({
    id: e.id ?? randomUUID(),
    householdId,
    date: e.date,
    eventType: e.eventType ?? 'Guests',
    servingTime: e.servingTime ?? '18:00',
    availableCookingMinutes: 30,
    notes: '',
    participants: JSON.stringify([]),
    createdAt: now,
    updatedAt: now,
  }));
  for (let i = 0; i < rows.length; i += 500) await knex('mealEvents').insert(rows.slice(i, i + 500));
  return rows.map((r) => r.id);
}

/** The list's order, computed independently of the service: date, then servingTime, then id. */
export function sortKey(e: { date: string; servingTime: string; id: string }): string {
  return `${e.date} ${e.servingTime} ${e.id}`;
}

/** `n` events over a few weeks, with deliberate ties on date and on date + servingTime. */
export function spread(n: number): SeedEvent[] {
  const times = ['12:00', '18:00', '18:00', '19:30'];
  const out: SeedEvent[] = [];
  for (let i = 0; i < n; i++) {
    const day = 1 + (i % 20);
    out.push({ date: `2026-11-${String(day).padStart(2, '0')}`, servingTime: times[i % times.length] });
  }
  return out;
}
