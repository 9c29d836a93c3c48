import { expect } from 'chai';
import { describe, it } from 'mocha';
import { CLASSES } from './parser-class-cases.js';
import { CLASSES_45 } from './parser-class-cases-45.js';
import { mismatches, runCase } from './parser-score.js';

describe('offline rule parser: the classes of issue 36', () => {
  for (const [name, cases] of Object.entries(CLASSES)) {
    describe(name, () => {
      for (const c of cases) {
        it(`${c.lang}: ${JSON.stringify(c.text)}`, () => {
          expect(mismatches(c, runCase(c)), c.text).to.deep.equal([]);
        });
      }
    });
  }
});

describe('offline rule parser: the classes of issue 45', () => {
  for (const [name, cases] of Object.entries(CLASSES_45)) {
    describe(name, () => {
      for (const c of cases) {
        it(`${c.lang}: ${JSON.stringify(c.text)}`, () => {
          expect(mismatches(c, runCase(c)), c.text).to.deep.equal([]);
        });
      }
    });
  }
});
