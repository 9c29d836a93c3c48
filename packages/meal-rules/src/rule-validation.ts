import { type FieldIssue, InputError, PartValidator, withStringLimits } from '@svc/http-kit';
import type { CreateMealRuleRequest } from './parser/types.js';
import { MealRuleRequestSchema } from './schemas.js';

/*
 * The one implementation of "would create accept this request?". The shape (members, enumerations,
 * ranges, formats) is the JSON Schema in schemas.ts, checked by the same ajv the ApiRouter uses;
 * the rules between members, which a schema cannot say, are semanticIssues below. Create and replace
 * run the schema (declared on the route) and then assertValidRuleRequest; the parse route and the
 * parser's tests use validateCreateRequest / isValidCreateRequest, which run both.
 */

/**
 * The cross-member rules, for a request already in the documented shape. Each issue names its field.
 * RULES_BETWEEN_FIELDS in schemas.ts states them for the OpenAPI document: change both together.
 */
export function semanticIssues(request: CreateMealRuleRequest): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const issue = (field: string, message: string) => issues.push({ field, message, in: 'body' });
  const { payload, scope, startDate, endDate } = request;

  if (scope === 'Permanent') {
    if (startDate !== null) issue('startDate', 'must be null when scope is Permanent');
    if (endDate !== null) issue('endDate', 'must be null when scope is Permanent');
  } else {
    if (startDate === null) issue('startDate', `is required when scope is ${scope}`);
    if (endDate === null) issue('endDate', `is required when scope is ${scope}`);
    if (startDate !== null && endDate !== null) {
      if (scope === 'SpecificDate' && startDate !== endDate) issue('endDate', 'must equal startDate when scope is SpecificDate');
      // YYYY-MM-DD strings sort as the dates do.
      if (scope === 'DateRange' && startDate > endDate) issue('endDate', 'must not be before startDate');
    }
  }

  // A rule about one date holds on that date only: scope SpecificDate on the same date.
  const onDate = (date: string) => {
    if (scope !== 'SpecificDate') issue('scope', 'must be SpecificDate when payload.specificDate is set');
    else if (startDate !== null && startDate !== date) issue('payload.specificDate', 'must equal startDate and endDate');
  };

  switch (payload.kind) {
    case 'CategoryFrequency':
      if (payload.minimumPerWeek > payload.maximumPerWeek) issue('payload.minimumPerWeek', 'must not be above maximumPerWeek');
      break;
    case 'CategoryOnDay':
      if (payload.weekday === null && payload.specificDate === null) issue('payload.weekday', 'one of weekday and specificDate must be set');
      else if (payload.weekday !== null && payload.specificDate !== null) issue('payload.specificDate', 'must be null when weekday is set');
      else if (payload.specificDate !== null) onDate(payload.specificDate);
      break;
    case 'MaximumActiveCookingTime':
      if (payload.specificDate !== null) {
        if (payload.weekdays.length > 0) issue('payload.weekdays', 'must be empty when specificDate is set');
        onDate(payload.specificDate);
      }
      break;
    default:
      break;
  }
  return issues;
}

/** Throws 400 `validation_failed`, naming each failing field, when a request in the documented shape breaks a rule between its members. */
export function assertValidRuleRequest(request: CreateMealRuleRequest): void {
  const issues = semanticIssues(request);
  if (issues.length === 0) return;
  throw new InputError('validation_failed', `The body is not valid: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`, issues);
}

// Compiled once; withStringLimits as ApiRouter applies it, so the answer is the route's answer.
const shape = new PartValidator(withStringLimits(MealRuleRequestSchema), 'body');

/** Every reason create would refuse `request` (shape first, then the rules between members); empty when it would accept it. */
export function ruleRequestIssues(request: unknown): FieldIssue[] {
  let checked: CreateMealRuleRequest;
  try {
    checked = shape.check(request) as CreateMealRuleRequest;
  } catch (err) {
    if (err instanceof InputError) return err.fields;
    throw err;
  }
  return semanticIssues(checked);
}

/** The reasons as `<field> <message>` lines; an empty list means create accepts the request as-is. */
export function validateCreateRequest(request: unknown): string[] {
  return ruleRequestIssues(request).map((i) => `${i.field} ${i.message}`);
}

/** True when the create operation accepts `request` as-is. */
export function isValidCreateRequest(request: unknown): request is CreateMealRuleRequest {
  return ruleRequestIssues(request).length === 0;
}
