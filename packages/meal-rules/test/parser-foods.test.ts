import { expect } from 'chai';
import { describe, it } from 'mocha';
import { parseRulesOffline } from '../src/parser/index.js';
import { EN_FOOD_WORDS, FOOD_PHRASES, FOOD_WORDS } from '../src/parser/lexicon.js';
import { TODAY } from './parser-case-kit.js';

// Issue 45: a food below the categories, in any form, alone with a negation never makes a category
// rule ("no pork" must not ban every meat dinner). The sentences are generated from the lexicon's
// food lists: every food in the forms people type (as listed, capitalised, without æ/ø/å, with
// plural and definite endings, as the head of a Norwegian compound), each under a negation of
// both languages, with and without a day.

const CATEGORY_KINDS = new Set(['CategoryFrequency', 'CategoryExcludedDays', 'CategoryOnDay']);

const asciiFolded = (w: string) => w.replace(/æ/g, 'ae').replace(/ø/g, 'o').replace(/å/g, 'a');

function formsOf(food: string): string[] {
  const forms = new Set([food, food[0]?.toUpperCase() + food.slice(1), asciiFolded(food)]);
  if (!food.includes(' ')) {
    for (const ending of ['s', 'es', 'er', 'en', 'ene', 'a']) forms.add(food + ending);
    forms.add(`${food}filet`);
    forms.add(`${food}gryte`);
  }
  return [...forms];
}

const NEGATIONS: ((food: string) => string)[] = [
  (f) => `no ${f}`,
  (f) => `ikke ${f}`,
  (f) => `never ${f} on mondays`,
  (f) => `ingen ${f} på fredager`,
  (f) => `we dont eat ${f}`,
  (f) => `aldri ${f}, takk`,
  (f) => `no ${f} from 1 to 14 July`,
  (f) => `vi spiser ikke ${f}`,
];

describe('offline rule parser: foods below the categories (generated from the lexicon)', () => {
  const foods = [...FOOD_WORDS, ...EN_FOOD_WORDS, ...FOOD_PHRASES];

  it('lists foods in both languages', () => {
    expect(foods).to.include.members(['pork', 'svinekjøtt', 'kjøttdeig', 'reker', 'skalldyr', 'laks', 'sopp', 'koriander', 'peanøtter', 'shellfish']);
  });

  it('never makes a category rule of a food under a negation, in any form', () => {
    const offending: string[] = [];
    let sentences = 0;
    foods.forEach((food, i) => {
      formsOf(food).forEach((form, k) => {
        // two negations a form, cycling through all of them, keeps the run to a few thousand parses
        for (const negate of [NEGATIONS[(i + k) % NEGATIONS.length], NEGATIONS[(i + k + 3) % NEGATIONS.length]]) {
          if (!negate) continue;
          const text = negate(form);
          sentences++;
          const r = parseRulesOffline(text, { today: TODAY });
          const rules = r.proposals.filter((p) => CATEGORY_KINDS.has(p.request.payload.kind));
          if (rules.length > 0 || r.unheard.length === 0) offending.push(`${text} → ${rules.map((p) => p.summary).join(', ') || 'nothing unheard'}`);
        }
      });
    });
    expect(sentences).to.be.greaterThan(5000);
    expect(offending, offending.slice(0, 20).join('\n')).to.deep.equal([]);
  });
});
