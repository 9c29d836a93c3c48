import { expect } from 'chai';
import levenshtein from 'damerau-levenshtein';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { parseRulesOffline } from '../src/parser/index.js';
import { LEXICON_SOURCES } from '../src/parser/lexicon.js';
import type { Lang } from '../src/parser/tags.js';
import { fold } from '../src/parser/text.js';
import { allowedEdits, boundedDistance, commonWordRanks, correctTypo, tolerantVocabulary, typoTarget } from '../src/parser/tolerant.js';
import { TODAY } from './parser-case-kit.js';

// The confusion check: typo tolerance must never turn one real word into another entry.

const LANGS: Lang[] = ['en', 'nb'];

/** Everyday words of both languages, some near the vocabulary (the pairs issue 16 names, and more). */
const EVERYDAY = `mai man tir tur tor for fra ikke ikkje past since wish dish fist meet meat melt heat seat neat beet
  beef been beer reef pork park port fork work cork lamb lamp limb tune tuna soap sour soup duck luck dock deck
  tact paste pasta pest mince wince mine mice fries fried tries tired frida friday sunday sundae monday mandate
  tuesday thursday wednesday saturday satur match march marsh mars many mandag mann menn mange mandel torsk tosk
  tors tirs tidag tid tida fisker fiske fisket fisken fiskes fiks kjott kylling kyllinger suppe supper suppa
  pris prise prisen billig billy billigere rimelig rimeligvis lam lamme lammet and ender andre anden ost ris
  ribbe rippe laks lakk lake taket takk taco tacos tango pizza pizzaer piazza pasta pastor poster lordag
  lordags sondag sondre sonn sonnen onsdag onsdags fredag fredags fredelig freden torsdag torsdags tirsdag tirsdags
  helg helgen helge helga hele helt heller hverdag hverdager hverandre verdag ukedag ukedager ukens juli juni
  julen jul jula june july august auguste augusta april aprikos mars marsj januar februar oktober november
  desember december september vegetar vegetarian vegetarianer vegan veganer veggie vegg vegger
  chicken chick chickens kitchen checking budget budge budgets moderate moderator cheap cheat chef chap cheep
  burger burgers burgher hamburg sushi suppose seafood seafront salmon salomon salon trout trot tout cod code coda
  beefy beefs porker porky steak steam stake steals mince mincemeat minced lasagne lasagna lasso noodles noodle`;

const fromLexicons = (): Set<string> => {
  const out = new Set<string>();
  for (const lang of LANGS) for (const [phrase] of LEXICON_SOURCES[lang]) for (const w of fold(phrase).split(/\s+/)) if (w) out.add(w);
  return out;
};

function realWords(): string[] {
  const out = fromLexicons();
  for (const lang of LANGS) for (const w of commonWordRanks(lang).keys()) out.add(w);
  for (const w of EVERYDAY.split(/\s+/)) if (w) out.add(fold(w));
  return [...out];
}

describe('offline rule parser: typo tolerance', () => {
  it('chooses the allowed edits by length: exact up to 4 letters, 1 edit up to 8, 2 from 9', () => {
    expect([1, 3, 4, 5, 8, 9, 12].map(allowedEdits)).to.deep.equal([0, 0, 0, 1, 1, 2, 2]);
  });

  it('reads the misspellings of issue 16 as the words meant', () => {
    const cases: [string, Lang, string][] = [
      ['thrusday', 'en', 'thursday'],
      ['sundya', 'en', 'sunday'],
      ['wendesday', 'en', 'wednesday'],
      ['vegeterian', 'en', 'vegetarian'],
      ['chikcen', 'en', 'chicken'],
      ['pizzza', 'en', 'pizza'],
      ['tirsdga', 'nb', 'tirsdag'],
      ['lordga', 'nb', 'lordag'],
      ['hvedager', 'nb', 'hverdager'],
      ['pizzza', 'nb', 'pizza'],
      ['vegeterian', 'nb', 'vegetarian'],
    ];
    for (const [typo, lang, meant] of cases) expect(typoTarget(typo, lang), `${typo} (${lang})`).to.equal(meant);
  });

  it('leaves a typo alone when it is as near to two meanings ("tursday", "tursdag") or to a common word ("pastt")', () => {
    expect(typoTarget('tursday', 'en')).to.equal(null);
    expect(typoTarget('tursdag', 'nb')).to.equal(null);
    expect(typoTarget('pastt', 'en')).to.equal(null);
  });

  it('never reads a real word of either language as a different entry (the confusion check)', () => {
    const words = realWords();
    expect(words.length).to.be.greaterThan(18000);
    const confused: string[] = [];
    for (const lang of LANGS) {
      const { meaningOf } = tolerantVocabulary(lang);
      for (const w of words) {
        // the path the parser takes, and the raw matcher, which must not need the known-word guard
        for (const got of [typoTarget(w, lang), correctTypo(w, lang)]) {
          if (got !== null && meaningOf(got) !== meaningOf(w)) confused.push(`${lang}: ${w} → ${got}`);
        }
      }
    }
    expect(confused).to.deep.equal([]);
  });

  it('reads a dropped or swapped letter in any vocabulary word as that word or not at all, never as another entry', () => {
    const known = new Set(realWords());
    const wrong: string[] = [];
    let read = 0;
    let tried = 0;
    for (const lang of LANGS) {
      const { targets, meaningOf } = tolerantVocabulary(lang);
      for (const t of targets) {
        const k = Math.floor(t.length / 2);
        const variants = [t.slice(0, k) + t.slice(k + 1), t.slice(0, k - 1) + t[k] + t[k - 1] + t.slice(k + 1)];
        for (const v of variants) {
          if (v === t || known.has(v)) continue;
          tried++;
          const got = typoTarget(v, lang);
          if (got !== null && meaningOf(got) !== meaningOf(t)) wrong.push(`${lang}: ${v} (from ${t}) → ${got}`);
          if (got !== null) read++;
        }
      }
    }
    expect(wrong).to.deep.equal([]);
    // most single slips are read; the rest sit as near to a common word, which wins
    expect(read / tried).to.be.greaterThan(0.8);
  });

  it('keeps the confusable short words apart in whole sentences', () => {
    const parse = (t: string) => parseRulesOffline(t, { today: TODAY }).proposals.map((p) => p.request.payload);
    expect(parse('taco 17. mai')).to.deep.equal([{ kind: 'CategoryOnDay', category: 'Taco', weekday: null, specificDate: '2027-05-17' }]);
    expect(parse('ikke fisk man. og tir.')).to.deep.equal([{ kind: 'CategoryExcludedDays', category: 'Fish', excludedWeekdays: ['Monday', 'Tuesday'] }]);
    expect(parse('vi går tur på søndager')).to.deep.equal([]);
    expect(parse('we wish for soup on Mondays')).to.deep.equal([{ kind: 'CategoryOnDay', category: 'Soup', weekday: 'Monday', specificDate: null }]);
    expect(parse('dinner at half past six')).to.deep.equal([{ kind: 'DinnerTimeOnWeekday', time: '18:30', weekdays: expect7() }]);
  });

  it('computes the bounded distance as the full Damerau–Levenshtein (OSA) does, capped at max + 1', () => {
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), maxLength: 9 });
    fc.assert(
      fc.property(word, word, fc.integer({ min: 0, max: 3 }), (a, b, max) => {
        const full = levenshtein(a, b).steps;
        expect(boundedDistance(a, b, max)).to.equal(Math.min(full, max + 1));
      }),
      { numRuns: 3000, seed: 16 },
    );
  });
});

function expect7(): string[] {
  return ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
}
