import type { HouseholdRole } from '@svc/contracts';
import type { HouseholdResponse, OnboardingStep } from './schemas.js';

const STEP_NAMES: Record<OnboardingStep, string> = { Pantry: 'the pantry', People: 'the people', Allergies: 'allergies', Rules: 'meal rules' };
const MEASURES: Record<HouseholdResponse['measurementSystem'], string> = { Metric: 'metric', Imperial: 'imperial', UsCustomary: 'US customary' };

/** How the recap's line of members begins (an account deletion rewrites that line). */
export const AT_THE_TABLE = 'At the table: ';

function onOff(value: boolean): string {
  return value ? 'on' : 'off';
}

/**
 * The onboarding recap: written from the household's own data (members, settings, skipped steps),
 * with no AI and no credits.
 */
export function recapText(household: HouseholdResponse, people: { name: string; role: HouseholdRole }[], skipped: OnboardingStep[]): string {
  const newDishes = household.maxNewDishesPerWeek === 1 ? '1 new dish' : `${household.maxNewDishesPerWeek} new dishes`;
  const lines = [
    `${household.name} is all set up.`,
    `${AT_THE_TABLE}${people.map((p) => `${p.name} (${p.role})`).join(', ')}.`,
    `Dinner is usually at ${household.defaultDinnerTime} (${household.timeZoneId}).`,
    `Measures: ${MEASURES[household.measurementSystem]}, dry goods by ${household.dryGoodsMeasure.toLowerCase()}; language ${household.preferredLanguage}; country ${household.country}.`,
    `Planning: up to ${newDishes} a week${household.alwaysNewDishes ? ', something new every time' : ''}; leftover dinners ${onOff(household.prefersLeftoverDinners)}; starter library ${onOff(household.useStarterLibrary)}; own recipes first ${onOff(household.preferOwnRecipes)}.`,
    skipped.length
      ? `Skipped for now: ${skipped.map((s) => STEP_NAMES[s]).join(', ')}. You can come back to ${skipped.length === 1 ? 'it' : 'them'} any time.`
      : 'Every step is done.',
  ];
  return lines.join('\n');
}
