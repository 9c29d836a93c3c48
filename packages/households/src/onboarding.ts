import type { AccountDirectory, HouseholdRole } from '@svc/contracts';
import { toHourMinute } from './formats.js';
import type { CompleteOnboardingResponse, HouseholdResponse, HouseholdStore, OnboardingStep } from './HouseholdStore.js';
import { listMembers } from './members.js';
import { ONBOARDING_STEPS } from './schemas.js';

export interface CompleteOnboardingRequest {
  skippedSteps?: OnboardingStep[] | null;
  defaultDinnerTime?: string | null;
}

const STEP_NAMES: Record<OnboardingStep, string> = { Pantry: 'the pantry', People: 'the people', Allergies: 'allergies', Rules: 'meal rules' };
const MEASURES: Record<HouseholdResponse['measurementSystem'], string> = { Metric: 'metric', Imperial: 'imperial', UsCustomary: 'US customary' };

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
    `At the table: ${people.map((p) => `${p.name} (${p.role})`).join(', ')}.`,
    `Dinner is usually at ${household.defaultDinnerTime} (${household.timeZoneId}).`,
    `Measures: ${MEASURES[household.measurementSystem]}, dry goods by ${household.dryGoodsMeasure.toLowerCase()}; language ${household.preferredLanguage}; country ${household.country}.`,
    `Planning: up to ${newDishes} a week${household.alwaysNewDishes ? ', something new every time' : ''}; leftover dinners ${onOff(household.prefersLeftoverDinners)}; starter library ${onOff(household.useStarterLibrary)}; own recipes first ${onOff(household.preferOwnRecipes)}.`,
    skipped.length
      ? `Skipped for now: ${skipped.map((s) => STEP_NAMES[s]).join(', ')}. You can come back to ${skipped.length === 1 ? 'it' : 'them'} any time.`
      : 'Every step is done.',
  ];
  return lines.join('\n');
}

/**
 * POST /households/{id}/onboarding/complete, for any member. A completed household answers its
 * original stamp and thread at once (one query). Otherwise the names are gathered before the row
 * lock is taken (so no lock is held while accounts answers) and the store re-checks under the lock.
 */
export async function completeOnboarding(
  deps: { store: HouseholdStore; accounts: AccountDirectory; now: () => Date },
  input: { userId: string; householdId: string; body: CompleteOnboardingRequest },
): Promise<CompleteOnboardingResponse> {
  const { store } = deps;
  const state = await store.onboardingState(input.userId, input.householdId);
  if (state.completedAt) return { onboardingCompletedAt: state.completedAt, alreadyCompleted: true, conversationId: state.conversationId };
  const members = await listMembers(store, deps.accounts, input.householdId);
  const people = members.map((m) => ({ name: m.displayName, role: m.role }));
  const asked = new Set(input.body.skippedSteps ?? []);
  const skipped = ONBOARDING_STEPS.filter((s) => asked.has(s));
  return store.completeOnboarding({
    householdId: input.householdId,
    at: deps.now(),
    defaultDinnerTime: input.body.defaultDinnerTime ? toHourMinute(input.body.defaultDinnerTime) : null,
    skippedSteps: skipped,
    recap: (household) => recapText(household, people, skipped),
  });
}
