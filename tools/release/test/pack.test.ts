import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { packList, publishable } from './packages.js';

/** A consumer needs the compiled code, its types, the compiled migrations and the docs; nothing else. */
const ALLOWED = [/^package\.json$/, /^README\.md$/, /^CHANGELOG\.md$/, /^dist\/src\/.+\.(js|d\.ts)$/, /^dist\/migrations\/.+\.(js|d\.ts)$/];

describe('every publishable package packs clean', () => {
  const packages = publishable();

  it('finds the fourteen libraries, none of the test-only or host workspaces', () => {
    expect(packages.map((p) => p.name).sort()).to.deep.equal([
      '@svc/accounts',
      '@svc/changes',
      '@svc/contracts',
      '@svc/db',
      '@svc/dishes',
      '@svc/households',
      '@svc/http-kit',
      '@svc/jobs',
      '@svc/meal-events',
      '@svc/meal-rules',
      '@svc/plan-solver',
      '@svc/planner',
      '@svc/push',
      '@svc/sign-in-factors',
    ]);
  });

  for (const pkg of publishable()) {
    describe(pkg.name, () => {
      it('declares files, ESM exports with types, and a publishConfig', () => {
        const json = pkg.json as { type?: string; files?: string[]; exports?: Record<string, Record<string, string>>; publishConfig?: Record<string, string> };
        expect(json.type).to.equal('module');
        expect(json.files).to.be.an('array').that.includes('dist/src');
        expect(json.exports?.['.']?.types).to.equal('./dist/src/index.d.ts');
        expect(json.exports?.['.']?.default).to.equal('./dist/src/index.js');
        expect(json.publishConfig).to.have.property('access');
      });

      it('holds only what a consumer needs: code, types, migrations, README (no tests, sources, maps or data)', () => {
        const files = packList(pkg.dir);
        const stray = files.filter((f) => !ALLOWED.some((re) => re.test(f)));
        expect(stray, `unexpected files in ${pkg.name}`).to.deep.equal([]);
        expect(files).to.include.members(['package.json', 'README.md', 'dist/src/index.js', 'dist/src/index.d.ts']);
        expect(files.some((f) => /(^|\/)(test|\.data)\//.test(f))).to.equal(false);
      });

      it('ships a compiled copy of every migration it owns', () => {
        const source = path.join(pkg.dir, 'migrations');
        if (!fs.existsSync(source)) return;
        const own = (fs.readdirSync(source, { recursive: true }) as string[])
          .filter((f) => f.endsWith('.ts'))
          .map((f) => `dist/migrations/${f.replace(/\.ts$/, '.js')}`);
        expect(own.length).to.be.greaterThan(0);
        expect(packList(pkg.dir)).to.include.members(own);
      });
    });
  }
});
