/**
 * Household settings: the defaults a new household gets (language en, measures from the country, every other setting its documented default) and the checks an
 * update needs beyond its schema (time zones, country codes, language tags).
 */
import { type FieldIssue, InputError } from '@svc/http-kit';
import { canonicalLanguage, countryOfTimeZone, dryGoodsMeasureFor, isKnownTimeZone, measurementSystemFor, normaliseCountry, toHourMinute } from './formats.js';
import type { CreateHouseholdRequest, UpdateHouseholdRequest } from './schemas.js';
import type { HouseholdChanges, NewHousehold } from './store.js';

export const DEFAULT_LANGUAGE = 'en';

const BOOLEAN_SETTINGS = [
  'preferOwnRecipes',
  'prefersLeftoverDinners',
  'alwaysNewDishes',
  'shareReceiptPrices',
  'shareUnitWeights',
  'tailorServingToTastes',
  'showSoftServingAdvice',
  'babyEatsSeparatelyWhenNeeded',
  'useStarterLibrary',
  'showChildTasks',
  'madeAgainLift',
] as const;

function refuse(issues: FieldIssue[]): never {
  throw new InputError('validation_failed', `The body is not valid: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`, issues);
}

function checkTimeZone(id: string, issues: FieldIssue[]): void {
  if (!isKnownTimeZone(id)) issues.push({ field: 'timeZoneId', message: 'is not a time zone of GET /api/v1/time-zones', in: 'body' });
}

function checkLanguage(tag: string, issues: FieldIssue[]): string {
  const canonical = canonicalLanguage(tag);
  if (!canonical) issues.push({ field: 'preferredLanguage', message: 'is not a BCP 47 language tag', in: 'body' });
  return canonical ?? tag;
}

/**
 * A new household from its request: country from the time zone (the zone's own country, else
 * ZZ), then the measurement system (UsCustomary for US, else Metric) and dry-goods measure (Volume
 * with UsCustomary, else Weight). 400 `validation_failed` for an unknown zone or language tag.
 */
export function newHousehold(body: CreateHouseholdRequest): NewHousehold {
  const issues: FieldIssue[] = [];
  checkTimeZone(body.timeZoneId, issues);
  const preferredLanguage = body.preferredLanguage == null ? DEFAULT_LANGUAGE : checkLanguage(body.preferredLanguage, issues);
  if (issues.length) refuse(issues);
  const country = countryOfTimeZone(body.timeZoneId);
  const measurementSystem = measurementSystemFor(country);
  return {
    name: body.name.trim(),
    timeZoneId: body.timeZoneId,
    defaultDinnerTime: toHourMinute(body.defaultDinnerTime),
    preferredLanguage,
    country,
    measurementSystem,
    dryGoodsMeasure: dryGoodsMeasureFor(measurementSystem),
  };
}

/**
 * The changes an update asks for: members left out or null are not changes. Values are
 * normalised (trimmed name, `HH:mm`, canonical language tag, upper-case country; an empty
 * address clears it). 400 `validation_failed` naming every field that fails.
 */
export function householdChanges(body: UpdateHouseholdRequest): HouseholdChanges {
  const issues: FieldIssue[] = [];
  const changes: HouseholdChanges = {};
  if (body.name != null) changes.name = body.name.trim();
  if (body.timeZoneId != null) {
    checkTimeZone(body.timeZoneId, issues);
    changes.timeZoneId = body.timeZoneId;
  }
  if (body.defaultDinnerTime != null) changes.defaultDinnerTime = toHourMinute(body.defaultDinnerTime);
  if (body.preferredLanguage != null) changes.preferredLanguage = checkLanguage(body.preferredLanguage, issues);
  if (body.country != null) {
    const country = normaliseCountry(body.country);
    if (country) changes.country = country;
    else issues.push({ field: 'country', message: 'is not an ISO 3166-1 alpha-2 country code', in: 'body' });
  }
  if (body.maxNewDishesPerWeek != null) changes.maxNewDishesPerWeek = body.maxNewDishesPerWeek;
  if (body.pantryWeight != null) changes.pantryWeight = body.pantryWeight;
  if (body.address != null) changes.address = body.address.trim() === '' ? null : body.address.trim();
  if (body.loyaltyPrograms != null) changes.loyaltyPrograms = body.loyaltyPrograms.map((p) => p.trim());
  if (body.measurementSystem != null) changes.measurementSystem = body.measurementSystem;
  if (body.dryGoodsMeasure != null) changes.dryGoodsMeasure = body.dryGoodsMeasure;
  for (const key of BOOLEAN_SETTINGS) {
    const value = body[key];
    if (value != null) changes[key] = value;
  }
  if (issues.length) refuse(issues);
  return changes;
}
