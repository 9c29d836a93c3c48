import { v5 as uuidv5 } from 'uuid';
import type { DefaultRules } from './schemas.js';

/**
 * National guideline rules: the contract offers, per country, the health authority's weekly advice
 * on fish and red meat as default rules (a fallback for countries without one).
 *
 * Each authority publishes its weekly advice on fish and on red meat. The planner counts dinners,
 * so the advice becomes CategoryFrequency rules in dinners per week:
 * - fish: the number of fish meals the authority names, or its weekly grams divided by a dinner
 *   portion of about 150 g (cooked);
 * - red meat: the weekly ceiling in grams divided by a dinner portion of about 150–175 g cooked,
 *   rounded to whole dinners. Category `Meat` is the red meat of the guidelines (beef, pork, lamb,
 *   game; poultry is its own category). Grams eaten outside dinner (cold cuts) are ignored, so these
 *   ceilings are generous readings of the advice, never stricter than it.
 * Where an authority gives a floor only ("at least two portions"), the maximum is 7 (no ceiling).
 *
 * All are `Soft` (advice, not a household's own decision) and `Permanent`.
 */
interface FrequencyAdvice {
  category: 'Fish' | 'Meat';
  minimumPerWeek: number;
  maximumPerWeek: number;
}

interface Guideline {
  /** Named in DefaultRulesResponse.source. */
  authority: string;
  rules: FrequencyAdvice[];
}

const GUIDELINES: Readonly<Record<string, Guideline>> = {
  // Helsedirektoratet, national dietary advice (Kostråd) of August 2024 and helsenorge.no "Kostråd
  // om fisk": fish for dinner two to three times a week (300–450 g). Red meat: at most 350 g a week
  // (lowered from 500 g in 2024) ≈ 2 dinners.
  NO: {
    authority: 'Helsedirektoratet',
    rules: [
      { category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 3 },
      { category: 'Meat', minimumPerWeek: 0, maximumPerWeek: 2 },
    ],
  },
  // Livsmedelsverket, Swedish dietary advice (kostråd) of April 2025: fish and shellfish two to three
  // times a week; red meat and processed meat below 350 g a week (was 500 g) ≈ 2 dinners.
  SE: {
    authority: 'Livsmedelsverket',
    rules: [
      { category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 3 },
      { category: 'Meat', minimumPerWeek: 0, maximumPerWeek: 2 },
    ],
  },
  // Fødevarestyrelsen, De officielle kostråd (2021): about 350 g fish a week (200 g of it fatty fish)
  // ≈ 2–3 dinners; about 350 g meat a week, limiting beef, lamb and processed meat ≈ 2 dinners.
  DK: {
    authority: 'Fødevarestyrelsen',
    rules: [
      { category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 3 },
      { category: 'Meat', minimumPerWeek: 0, maximumPerWeek: 2 },
    ],
  },
  // Ruokavirasto (the National Nutrition Council VRN, hosted by the Finnish Food Authority), national
  // nutrition recommendations 2024: fish 300–450 g a week ≈ 2–3 times; red and processed meat at most
  // 350 g a week (500 g in the 2014 recommendations) ≈ 2 dinners.
  FI: {
    authority: 'Ruokavirasto',
    rules: [
      { category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 3 },
      { category: 'Meat', minimumPerWeek: 0, maximumPerWeek: 2 },
    ],
  },
  // DGE (Deutsche Gesellschaft für Ernährung), "Gut essen und trinken", March 2024: fish one to two
  // times a week; meat and sausage at most 300 g a week (was 300–600 g) ≈ 2 dinners.
  DE: {
    authority: 'DGE',
    rules: [
      { category: 'Fish', minimumPerWeek: 1, maximumPerWeek: 2 },
      { category: 'Meat', minimumPerWeek: 0, maximumPerWeek: 2 },
    ],
  },
  // NHS, Eatwell Guide / "Eat well": at least 2 portions (about 140 g each) of fish a week, one of them
  // oily; red and processed meat no more than 70 g a day on average ≈ 490 g a week ≈ 3 dinners.
  GB: {
    authority: 'NHS',
    rules: [
      { category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 7 },
      { category: 'Meat', minimumPerWeek: 0, maximumPerWeek: 3 },
    ],
  },
  // USDA/HHS, Dietary Guidelines for Americans 2020–2025: at least 8 ounces (about 227 g) of seafood a
  // week at 2,000 kcal ≈ 2 meals of 4 oz. The DGA sets no weekly ceiling for red meat (it counts meat,
  // poultry and eggs together), so there is no Meat rule for the US.
  US: {
    authority: 'USDA',
    rules: [{ category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 7 }],
  },
};

// Fallback for every other country. WHO/FAO, "Diet, nutrition and the prevention of chronic
// diseases" (Technical Report Series 916, 2003): regular fish consumption, 1–2 servings a week, is
// recommended. WHO's IARC (2015) classed red meat as probably carcinogenic and processed meat as
// carcinogenic, supporting advice to limit meat, but WHO names no number; the ceiling of 3 dinners
// follows the World Cancer Research Fund's "no more than about three portions (350–500 g cooked) a
// week" as the usual reading of that advice.
const WHO: Guideline = {
  authority: 'WHO',
  rules: [
    { category: 'Fish', minimumPerWeek: 1, maximumPerWeek: 2 },
    { category: 'Meat', minimumPerWeek: 0, maximumPerWeek: 3 },
  ],
};

/** Namespace of the synthetic default-rule ids (uuid v5 of `<country>/<index>`). Never change it: clients may hold the ids. */
const DEFAULT_RULE_NAMESPACE = '55d4888a-fabb-48e5-91ca-2d875a443189';

/** createdAt/updatedAt of every default rule: when this table of guidelines was last reviewed. A constant, so answers are stable. */
export const GUIDELINES_REVIEWED_AT = '2026-11-22T00:00:00.000Z';

/** Countries with a guideline of their own (others get the WHO fallback). */
export const GUIDELINE_COUNTRIES: readonly string[] = Object.keys(GUIDELINES);

/**
 * The guideline rules for a household in `country` (ISO 3166-1 alpha-2). Ids are stable: the same
 * country and position always give the same id, in every household. Nothing is stored.
 */
export function defaultRulesFor(householdId: string, country: string, active: boolean): DefaultRules {
  const code = country.trim().toUpperCase();
  const guideline = GUIDELINES[code] ?? WHO;
  return {
    active,
    source: guideline.authority,
    rules: guideline.rules.map((advice, index) => ({
      id: defaultRuleId(code, index),
      householdId,
      kind: 'CategoryFrequency',
      strength: 'Soft',
      scope: 'Permanent',
      startDate: null,
      endDate: null,
      source: 'SystemDefault',
      payload: { kind: 'CategoryFrequency', category: advice.category, minimumPerWeek: advice.minimumPerWeek, maximumPerWeek: advice.maximumPerWeek },
      createdAt: GUIDELINES_REVIEWED_AT,
      updatedAt: GUIDELINES_REVIEWED_AT,
    })),
  };
}

/** How many rule ids are kept (codes are two letters, so every country's fit; the cap only bounds memory). */
const RULE_IDS_MAX = 8192;
/** The id of each country's rule by position (uuid v5 is a SHA-1 each time). */
const ruleIds = new Map<string, string>();

function defaultRuleId(code: string, index: number): string {
  const name = `${code}/${index}`;
  let id = ruleIds.get(name);
  if (id === undefined) {
    id = uuidv5(name, DEFAULT_RULE_NAMESPACE);
    if (ruleIds.size < RULE_IDS_MAX) ruleIds.set(name, id);
  }
  return id;
}
