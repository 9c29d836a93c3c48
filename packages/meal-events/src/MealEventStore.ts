/** The four kinds of meal event (decisions.md §2). */
export const EVENT_TYPES = ['Guests', 'EatingOut', 'Away', 'Activity'] as const;
export type MealEventType = (typeof EVENT_TYPES)[number];

/** One person at (or away from) the table; `memberId` links a household member when there is one. */
export interface Participant {
  memberId: string | null;
  name: string;
}

/** A meal event as the API answers it. */
export interface MealEvent {
  id: string;
  householdId: string;
  /** YYYY-MM-DD */
  date: string;
  eventType: MealEventType;
  /** HH:mm, 24-hour */
  servingTime: string;
  availableCookingMinutes: number;
  notes: string;
  participants: Participant[];
  /** ISO 8601 UTC with milliseconds */
  createdAt: string;
  updatedAt: string;
}

/** What a client writes: every member required, a PUT replaces them all. */
export interface MealEventInput {
  date: string;
  eventType: MealEventType;
  /** HH:mm or HH:mm:ss; stored to the minute. */
  servingTime: string;
  availableCookingMinutes: number;
  notes: string;
  participants: Participant[];
}

/** A place in the list's order (`date`, `servingTime`, `id`): the page starts after it. */
export interface EventPosition {
  date: string;
  servingTime: string;
  id: string;
}

export interface PageRequest {
  /** Inclusive bounds, YYYY-MM-DD; null for open. */
  from: string | null;
  to: string | null;
  /** Start strictly after this position; null for the first page. */
  after: EventPosition | null;
  /** 1 to 100. */
  limit: number;
}

export interface EventPage {
  items: MealEvent[];
  /** True when at least one more event follows the last item (the store reads limit + 1 rows). */
  hasMore: boolean;
}

/** What the router needs from storage. Every method is scoped to one household. */
export interface MealEventStore {
  /** One page in list order (keyset: cost does not grow with depth). */
  page(householdId: string, request: PageRequest): Promise<EventPage>;
  get(householdId: string, id: string): Promise<MealEvent | undefined>;
  create(householdId: string, input: MealEventInput): Promise<MealEvent>;
  /** Full replacement; undefined when the household has no such event. */
  replace(householdId: string, id: string, input: MealEventInput): Promise<MealEvent | undefined>;
  /** False when the household has no such event. */
  remove(householdId: string, id: string): Promise<boolean>;
}
