/**
 * Sizes a person can hold (issue 43): no source file of the repository is over 600 lines, but data
 * and word lists; no package README over 150 lines, and docs/benchmarks.md at most 300. Import
 * circles are kept out by biome's `noImportCycles` (biome.json).
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

  it('has docs a newcomer can read through: each package README at most 150 lines, docs/benchmarks.md at most 300', () => {
    const readmes = fs
      .readdirSync(path.join(root, 'packages'))
      .map((p) => path.join('packages', p, 'README.md'))
      .filter((f) => fs.existsSync(path.join(root, f)));
    expect(readmes.length).to.be.above(10);
    const over = readmes.map((f) => ({ f, n: lineCount(path.join(root, f)) })).filter(({ n }) => n > 150);
    expect(over.map(({ f, n }) => `${f}: ${n} lines`)).to.deep.equal([]);
    expect(lineCount(path.join(root, 'docs', 'benchmarks.md'))).to.be.at.most(300);
  });
});
