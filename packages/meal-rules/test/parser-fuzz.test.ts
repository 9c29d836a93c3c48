import { expect } from 'chai';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { type ParseRulesResponse, parseRulesOffline, validateCreateRequest } from '../src/parser/index.js';
import { LEXICON_SOURCES } from '../src/parser/lexicon.js';
import { parseRulesUnguarded } from '../src/parser/parse.js';
import { TODAY } from './parser-case-kit.js';

// No parse ever throws. parseRulesOffline has a safety net (anything thrown inside comes back as
// "not understood"), so these properties run the parser WITHOUT it: the net must never be needed.
// fast-check prints the seed and the shrunk input of any failure, so a failure can be replayed.

const VOCABULARY = [...new Set([...LEXICON_SOURCES.en, ...LEXICON_SOURCES.nb].map(([phrase]) => phrase))];
const ODD_BITS = [
  '17:30',
  '5.30',
  '1/6',
  '15/6/2027',
  '24.12.2027',
  '2027-12-24',
  '3.',
  '1.-14.',
  '1730',
  '2x',
  '24th',
  '-',
  '–',
  ',',
  '.',
  '!',
  '?',
  ':',
  '/',
  '&',
  '+',
  '(',
  ')',
  '\n',
  '…',
  '🐟',
  'ÆØÅ',
];
const TYPOS = ['thrusday', 'sundya', 'wendesday', 'tirsdga', 'lørdga', 'hvedager', 'vegeterian', 'chikcen', 'pizzza', 'tursdag', 'desmeber'];

/** Sentences made of the parser's own words, numbers, typos and punctuation: the inputs most likely to reach deep code. */
const wordSalad = fc
  .array(fc.oneof(fc.constantFrom(...VOCABULARY), fc.constantFrom(...ODD_BITS), fc.constantFrom(...TYPOS), fc.integer({ min: 0, max: 3000 }).map(String)), {
    maxLength: 40,
  })
  .chain((parts) => fc.constantFrom(' ', ', ', ' og ', ' and ').map((sep) => parts.join(sep)));

function checkResponse(text: string, r: ParseRulesResponse): void {
  expect(r.proposals).to.be.an('array');
  for (const p of r.proposals) {
    expect(validateCreateRequest(p.request), `${JSON.stringify(text)} → ${p.summary}`).to.deep.equal([]);
    expect(p.summary).to.be.a('string').and.not.equal('');
  }
  for (const u of r.unheard) expect(text.includes(u), `unheard ${JSON.stringify(u)} is a piece of the text`).to.equal(true);
}

describe('offline rule parser: no parse ever throws (property tests)', () => {
  it('random strings of any characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => checkResponse(text, parseRulesUnguarded(text, { today: TODAY }))),
      { numRuns: 1500 },
    );
  });

  it('random sentences of the parser’s own words, numbers, typos and punctuation', () => {
    fc.assert(
      fc.property(wordSalad, fc.constantFrom('en', 'nb', undefined), (text, language) =>
        checkResponse(text, parseRulesUnguarded(text, { today: TODAY, language })),
      ),
      { numRuns: 1500 },
    );
  });

  it('random dates for today, including ones at the edges of months and years', () => {
    const today = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true });
    fc.assert(
      fc.property(wordSalad, today, (text, d) => checkResponse(text, parseRulesUnguarded(text, { today: d.toISOString().slice(0, 10) }))),
      { numRuns: 500 },
    );
  });

  it('the public entry point answers the same as the unguarded parser', () => {
    fc.assert(
      fc.property(wordSalad, (text) => {
        expect(parseRulesOffline(text, { today: TODAY })).to.deep.equal(parseRulesUnguarded(text, { today: TODAY }));
      }),
      { numRuns: 300 },
    );
  });
});
