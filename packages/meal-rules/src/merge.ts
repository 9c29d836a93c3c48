import type { DishesNamed, MealRulePayload, ParsedRuleProposal, ParseRulesResponse, Weekday } from './parser/index.js';
import { isValidCreateRequest } from './rule-validation.js';

/** The weekdays a payload speaks of; `undefined` for "every day" (an empty list of a kind where empty means every day). */
function daysOf(payload: MealRulePayload): ReadonlySet<Weekday> | undefined {
  switch (payload.kind) {
    case 'MaximumActiveCookingTime':
    case 'PriceClassOnDays':
    case 'DinnerTimeOnWeekday':
      return payload.weekdays.length === 0 ? undefined : new Set(payload.weekdays);
    default:
      return undefined;
  }
}

function shareADay(a: MealRulePayload, b: MealRulePayload): boolean {
  const x = daysOf(a);
  const y = daysOf(b);
  if (!x || !y) return true;
  for (const day of x) if (y.has(day)) return true;
  return false;
}

/**
 * Whether two proposals speak of the same thing, so that only one of them should be offered: the
 * same kind about the same category, the same day or date, or overlapping weekdays.
 */
export function sameSubject(a: ParsedRuleProposal, b: ParsedRuleProposal): boolean {
  const p = a.request.payload;
  const q = b.request.payload;
  if (p.kind !== q.kind) return false;
  switch (p.kind) {
    case 'CategoryFrequency':
    case 'CategoryExcludedDays':
      return p.category === (q as typeof p).category;
    case 'CategoryOnDay': {
      // One dish a day: two wishes for the same day (or date) collide whatever their categories.
      const o = q as typeof p;
      return (p.weekday !== null && p.weekday === o.weekday) || (p.specificDate !== null && p.specificDate === o.specificDate);
    }
    case 'MaximumActiveCookingTime':
      return p.specificDate === (q as typeof p).specificDate && shareADay(p, q);
    case 'DinnerTimeOnWeekday':
    case 'PriceClassOnDays':
      return shareADay(p, q);
    case 'RepeatAfterDays':
      return true;
    default:
      return false;
  }
}

/**
 * The model's reading and the offline parser's, as one answer. The model read the whole sentence
 * and wins wherever both speak of the same thing; the offline parser fills in the rules the model
 * missed (it is exact on the phrasings it knows). `leftoverDinners` is the model's, else the
 * offline parser's; `unheard` is the model's (its reading is the one the household paid for), unless
 * the model heard nothing at all: then the offline parser's.
 */
export function mergeParses(model: ParseRulesResponse, offline: ParseRulesResponse): ParseRulesResponse {
  const missed = offline.proposals.filter((o) => !model.proposals.some((m) => sameSubject(m, o)));
  // A model that heard nothing at all ("silent") would report the whole sentence unheard beside the
  // offline parser's rules; then the offline parser read the sentence alone, and its unheard stands.
  const silent = model.proposals.length === 0 && model.leftoverDinners === null;
  return {
    proposals: [...model.proposals, ...missed],
    leftoverDinners: model.leftoverDinners ?? offline.leftoverDinners,
    unheard: silent ? offline.unheard : model.unheard,
  };
}

/** A proposal the create operation would refuse is no proposal: its summary joins `unheard`. */
export function creatableOnly(parsed: ParseRulesResponse): ParseRulesResponse {
  const proposals = parsed.proposals.filter((p) => isValidCreateRequest(p.request));
  const refused = parsed.proposals.filter((p) => !proposals.includes(p)).map((p) => p.summary);
  return { proposals, leftoverDinners: parsed.leftoverDinners, unheard: [...parsed.unheard, ...refused] };
}

const CATEGORY_KINDS: ReadonlySet<string> = new Set(['CategoryFrequency', 'CategoryExcludedDays', 'CategoryOnDay']);

/**
 * Issue 45: a model may read "no pork" as no meat at all. In a sentence that names a food below
 * the categories, a model's dish rule stands only for a category the sentence names by its own
 * words or the offline parser proposed too; the others are dropped, and the offline parser's
 * unheard clauses (where the food is) are reported beside the model's.
 */
export function withoutFoodBans(model: ParseRulesResponse, offline: ParseRulesResponse, dishes: DishesNamed): ParseRulesResponse {
  if (!dishes.food) return model;
  const offlineCats = new Set(offline.proposals.map((p) => p.request.payload).flatMap((p) => ('category' in p ? [p.category] : [])));
  const keep = (p: ParsedRuleProposal) => {
    const payload = p.request.payload;
    if (!CATEGORY_KINDS.has(payload.kind) || !('category' in payload)) return true;
    return dishes.categories.has(payload.category) || offlineCats.has(payload.category);
  };
  const proposals = model.proposals.filter(keep);
  if (proposals.length === model.proposals.length) return model;
  const unheard = [...model.unheard, ...offline.unheard.filter((u) => !model.unheard.includes(u))];
  return { ...model, proposals, unheard };
}

/**
 * What POST …/rules/parse answers when the model answered: its creatable proposals (none banning a
 * category for a food, when `dishes` is given) merged with the offline reading.
 */
export function mergeModelReading(model: ParseRulesResponse, offline: ParseRulesResponse, dishes?: DishesNamed): ParseRulesResponse {
  const guarded = dishes ? withoutFoodBans(creatableOnly(model), offline, dishes) : creatableOnly(model);
  return creatableOnly(mergeParses(guarded, offline));
}
