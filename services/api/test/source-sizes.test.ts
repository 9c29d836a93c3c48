/**
 * Sizes a person can hold (issue 43): no source file of the repository is over 600 lines, but data
 * and word lists. Import circles are kept out by biome's `noImportCycles` (biome.json).
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const root = path.resolve(import.meta.dirname, '../../..');
const MAX_LINES = 600;

/** Data and word lists: long by nature, read as tables rather than as code. */
const DATA = ['packages/dishes/src/starter/dishes.ts', 'packages/meal-rules/src/parser/lexicon.ts'];

/** Folders that hold no source: tests, build output, dependencies, data. */
const SKIP = ['node_modules', 'dist', 'test', 'test-artifacts'];

/** The source: every .ts, .mts and .mjs file but tests, declarations, build output and dependencies. */
function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return SKIP.includes(e.name) || e.name.startsWith('.') ? [] : sources(full);
    return /\.(ts|mts|mjs)$/.test(e.name) && !/\.(d|test)\.ts$/.test(e.name) ? [full] : [];
  });
}

const lineCount = (file: string) => fs.readFileSync(file, 'utf8').split('\n').length - 1;

describe('source sizes', () => {
  const files = ['packages', 'services', 'tools', 'infra', 'scripts'].flatMap((d) => sources(path.join(root, d))).map((f) => path.relative(root, f));

  it('sees the source it checks (and the data files are still long)', () => {
    expect(files).to.include('packages/accounts/src/service.ts');
    for (const f of DATA) expect(lineCount(path.join(root, f)), f).to.be.above(MAX_LINES);
  });

  it(`has no source file over ${MAX_LINES} lines but data and word lists`, () => {
    const over = files
      .filter((f) => !DATA.includes(f))
      .map((f) => ({ f, n: lineCount(path.join(root, f)) }))
      .filter(({ n }) => n > MAX_LINES)
      .map(({ f, n }) => `${f}: ${n} lines`);
    expect(over).to.deep.equal([]);
  });
});
