import type { HouseholdProfiles, TellRunDone } from '@svc/contracts';
import type { NotificationService } from './notifications.js';
import { type TextLanguage, textLanguage } from './texts.js';

/** The runDone texts, by how the run ended. */
const RUN_DONE_TEXTS: Record<TextLanguage, Record<'done' | 'infeasible' | 'failed', { title: string; body: string }>> = {
  en: {
    done: { title: 'Dinner plan ready', body: 'Your new dinner plan is ready.' },
    infeasible: { title: 'No dinner plan', body: 'Your rules and events cannot all hold: see what clashes in the plan.' },
    failed: { title: 'Dinner plan failed', body: 'The dinner plan could not be made. Try again.' },
  },
  nb: {
    done: { title: 'Middagsplanen er klar', body: 'Den nye middagsplanen er klar.' },
    infeasible: { title: 'Ingen middagsplan', body: 'Reglene og hendelsene kan ikke holde alle sammen: se hva som kolliderer i planen.' },
    failed: { title: 'Middagsplanen mislyktes', body: 'Middagsplanen kunne ikke lages. Prøv igjen.' },
  },
};

/**
 * The TellRunDone capability (@svc/contracts) for @svc/planner: a `runDone` notification to every
 * member with an account, in the household's language, written inside the run's final transaction
 * (inbox rows and the fan-out job commit with the result). The notification's id is the plan's
 * id, so a run written again by another instance stores and sends it once.
 */
export function runDoneTeller(notifications: NotificationService, profiles: HouseholdProfiles): TellRunDone {
  return async ({ planId, householdId, status }, trx) => {
    const text = RUN_DONE_TEXTS[textLanguage((await profiles(householdId)).preferredLanguage)][status];
    await notifications.send(householdId, { kind: 'runDone', ...text, data: { planId, householdId, status } }, trx, planId);
  };
}
