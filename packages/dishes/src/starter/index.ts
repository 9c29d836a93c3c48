import type { PlannableDish, StarterLanguage } from '@svc/contracts';
import type { StarterDish } from '../schemas.js';
import { STARTER_ENTRIES } from './dishes.js';

export { STARTER_ENTRIES, type StarterEntry } from './dishes.js';

/** The starter library in one language, made once when the module loads (no request does this work). */
export interface StarterLibrary {
  /** By name in the language's own order (then id): GET /starter-dishes' items. */
  readonly items: readonly StarterDish[];
  /** GET /starter-dishes' whole answer as JSON text, sent as it is. */
  readonly json: string;
  /** As the planner sees them, by id. */
  readonly plannable: readonly PlannableDish[];
  /** By id. */
  readonly byId: ReadonlyMap<string, PlannableDish>;
}

function build(language: StarterLanguage): StarterLibrary {
  const collator = new Intl.Collator(language, { sensitivity: 'base' });
  const dishes: StarterDish[] = STARTER_ENTRIES.map((e) =>
    Object.freeze({
      id: e.id,
      name: e[language].name,
      category: e.category,
      activeMinutes: e.activeMinutes,
      priceClass: e.priceClass,
      tags: Object.freeze([...e[language].tags]) as string[],
    }),
  );
  const items = Object.freeze([...dishes].sort((a, b) => collator.compare(a.name, b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  const plannable = Object.freeze(
    [...dishes]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map(
        (d): PlannableDish =>
          Object.freeze({
            id: d.id,
            origin: 'starter',
            name: d.name,
            category: d.category,
            activeMinutes: d.activeMinutes,
            priceClass: d.priceClass,
            madeAgain: false,
          }),
      ),
  );
  return { items, json: JSON.stringify({ items }), plannable, byId: new Map(plannable.map((d) => [d.id, d])) };
}

/** The starter library in each language, built at module load. */
export const STARTER_LIBRARY: Readonly<Record<StarterLanguage, StarterLibrary>> = Object.freeze({ en: build('en'), nb: build('nb') });
