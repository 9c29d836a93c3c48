import type { HouseholdBounds } from '../schemas.js';

/**
 * A condition that is always true and, as it is evaluated, sets the bounds the writing statement's
 * triggers hold (migration 20261202130000_meal_events_bounds) for that statement's transaction
 * only: the service's `bounds` reach the triggers without a statement of their own. Its one
 * binding is `boundsSetting(bounds)`.
 */
export const SET_BOUNDS = `set_config('meal_events.bounds', ?, true) is not null`;

/** The binding of SET_BOUNDS: the bounds as JSON, or '' for the real ones. */
export function boundsSetting(bounds: HouseholdBounds | undefined): string {
  return bounds ? JSON.stringify(bounds) : '';
}

/** The SQLSTATE those triggers raise past a bound; the error's `constraint` names which one. */
export const OVER_BOUND = 'MEBND';

/** The bound an error of those triggers names, or undefined for any other error. */
export function boundOf(err: unknown): 'liveEvents' | 'events' | 'activeSeries' | undefined {
  const e = err as { code?: string; constraint?: string };
  if (e?.code !== OVER_BOUND) return undefined;
  if (e.constraint === 'meal_events_live_per_household') return 'liveEvents';
  if (e.constraint === 'meal_event_series_active_per_household') return 'activeSeries';
  return 'events';
}
