import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from './packages.js';

// `changeset version` on a copy of the workspace manifests: a changeset for one package bumps that
// package alone (its dependents' ^ ranges still hold); one that leaves a range (a major) bumps the
// dependents too, with "Updated dependencies" in their changelogs.
describe('release:version: Changesets bump exactly the packages a change touches', function () {
  this.timeout(120_000);
  let dir: string;
  const manifests = () =>
    execFileSync('git', ['ls-files', '*package.json', '.changeset/config.json'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f && f !== 'package-lock.json' && !f.includes('node_modules'));
  const version = (file: string) => JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { version: string; dependencies?: Record<string, string> };
  const changeset = (body: string) => {
    fs.writeFileSync(path.join(dir, '.changeset/test-change.md'), body);
    execFileSync(path.join(ROOT, 'node_modules/.bin/changeset'), ['version'], { cwd: dir, stdio: 'pipe' });
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-version-'));
    for (const file of manifests()) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.copyFileSync(path.join(ROOT, file), path.join(dir, file));
    }
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a patch of @svc/push bumps @svc/push alone and writes its CHANGELOG', () => {
    const before = version('packages/push/package.json').version;
    changeset('---\n"@svc/push": patch\n---\n\nA fix in push.\n');
    const after = version('packages/push/package.json').version;
    expect(after).to.not.equal(before);
    expect(fs.readFileSync(path.join(dir, 'packages/push/CHANGELOG.md'), 'utf8')).to.contain('A fix in push.');
    for (const other of ['contracts', 'db', 'http-kit', 'accounts', 'households', 'meal-rules', 'meal-events']) {
      expect(fs.existsSync(path.join(dir, `packages/${other}/CHANGELOG.md`)), other).to.equal(false);
    }
  });

  it('a major of @svc/contracts (out of ^ range) bumps its dependents and their ranges', () => {
    changeset('---\n"@svc/contracts": major\n---\n\nA capability changed.\n');
    const contracts = version('packages/contracts/package.json').version;
    const push = version('packages/push/package.json');
    expect(push.dependencies?.['@svc/contracts']).to.equal(`^${contracts}`);
    expect(fs.readFileSync(path.join(dir, 'packages/push/CHANGELOG.md'), 'utf8')).to.contain('Updated dependencies');
  });

  it('a minor of @svc/contracts (1.x: within ^ range) bumps @svc/contracts alone', () => {
    const pushBefore = version('packages/push/package.json');
    changeset('---\n"@svc/contracts": minor\n---\n\nA new capability.\n');
    expect(version('packages/contracts/package.json').version).to.match(/^1\.1\./);
    expect(version('packages/push/package.json')).to.deep.equal(pushBefore);
  });
});
