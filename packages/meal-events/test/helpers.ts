import { randomUUID } from 'node:crypto';
import type { Caller, Clock, HouseholdAccess, HouseholdMemberIds, HouseholdProfile, HouseholdRole, RandomBytes } from '@svc/contracts';
import { createHttpApp, createLogger, NotFoundError } from '@svc/http-kit';
import { buildTestApp, testAuthenticate } from '@svc/test-support';
import type { Express } from 'express';
import type { Knex } from 'knex';
import {
  type CalendarFeedLimits,
  CalendarFeedService,
  createRouter,
  type EventReminders,
  type HouseholdBounds,
  MealEventsService,
  ObjectionCalendarFeedStore,
  ObjectionMealEventStore,
  SeriesStore,
} from '../src/index.js';

/**
 * What @svc/households offers this package, over maps: roles (HouseholdAccess), member ids
 * (HouseholdMemberIds) and time zones (HouseholdProfiles).
 */
export class MemoryAccess implements HouseholdAccess {
  readonly members = new Map<string, Map<string, HouseholdRole>>();
  /** household → member ids (participants may name these). */
  readonly memberIdsOf = new Map<string, Set<string>>();
  /** household → IANA zone; Europe/Oslo unless set. */
  readonly zones = new Map<string, string>();

  set(householdId: string, userId: string, role: HouseholdRole): this {
    const m = this.members.get(householdId) ?? new Map<string, HouseholdRole>();
    m.set(userId, role);
    this.members.set(householdId, m);
    return this;
  }

  addMember(householdId: string, memberId: string): this {
    const s = this.memberIdsOf.get(householdId) ?? new Set<string>();
    s.add(memberId.toLowerCase());
    this.memberIdsOf.set(householdId, s);
    return this;
  }

  zone(householdId: string, zone: string): this {
    this.zones.set(householdId, zone);
    return this;
  }

  /** HouseholdMemberIds */
  readonly memberIds: HouseholdMemberIds = async (householdId) => new Set(this.memberIdsOf.get(householdId) ?? []);

  /** HouseholdProfiles */
  readonly profiles = async (householdId: string): Promise<HouseholdProfile> => {
    if (!this.members.has(householdId)) throw new NotFoundError('not_found', 'No such household');
    return { id: householdId, country: 'NO', timeZoneId: this.zones.get(householdId) ?? 'Europe/Oslo', preferredLanguage: 'nb' };
  };

  async roleOf({ userId }: Caller, householdId: string): Promise<HouseholdRole> {
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

export interface EventsApp {
  app: Express;
  service: MealEventsService;
  calendar: CalendarFeedService;
}

/** The package's router over `knex`, as the host builds it, with the stand-ins above. */
export function buildEventsApp(options: {
  knex: Knex;
  clock: Clock;
  access: MemoryAccess;
  cursorSecret?: string;
  tokenSecret?: string;
  publicBaseUrl?: string;
  random?: RandomBytes;
  calendarLimits?: CalendarFeedLimits;
  trustProxy?: boolean;
  reminders?: EventReminders;
  series?: SeriesStore;
  bounds?: Partial<HouseholdBounds>;
}): EventsApp {
  const store = new ObjectionMealEventStore(options.knex);
  const { access, clock } = options;
  const service = new MealEventsService({
    store,
    clock,
    access,
    memberIds: access.memberIds,
    cursorSecret: options.cursorSecret ?? 'test secret',
    random: options.random,
    series: options.series ?? new SeriesStore(options.knex),
    profiles: access.profiles,
    reminders: options.reminders,
    bounds: options.bounds,
  });
  const calendar = new CalendarFeedService({
    feeds: new ObjectionCalendarFeedStore(options.knex),
    events: store,
    clock,
    access,
    profiles: access.profiles,
    publicBaseUrl: options.publicBaseUrl ?? 'https://meals.example.com',
    tokenSecret: options.tokenSecret ?? 'test calendar secret',
    random: options.random,
  });
  const routers = [createRouter({ service, calendar, calendarLimits: options.calendarLimits })];
  // The shared test pipeline, or (to tell clients apart by X-Forwarded-For) the same pipeline trusting one proxy hop.
  const app = options.trustProxy
    ? createHttpApp({
        logger: createLogger({ level: 'silent' }),
        allowedOrigins: ['http://localhost:8080'],
        routers,
        authenticate: [testAuthenticate],
        trustProxy: 1,
      })
    : buildTestApp({ routers });
  return { app, service, calendar };
}
