import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT } from './packages.js';

const SCRIPT = path.join(ROOT, 'scripts/check-changesets.mjs');
const REPORT = (body: string) => `## API Report File for "@svc/demo"\n\n\`\`\`ts\n\nimport { Knex } from 'knex';\n\n${body}\n\n\`\`\`\n`;

describe('check-changesets: an API change needs a changeset, a breaking one a major changeset', () => {
  let root: string;
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  const check = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, '--root', root, ...args], { encoding: 'utf8' });

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-changesets-'));
    write('packages/demo/package.json', JSON.stringify({ name: '@svc/demo', version: '1.0.0' }));
    write('packages/demo/report.api.md', REPORT('// @public\nexport function a(): void;'));
    expect(check('--accept').status).to.equal(0);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('passes while the report matches its baseline', () => {
    expect(check().status).to.equal(0);
  });

  it('fails when the surface grew without a changeset, and passes with a minor one', () => {
    write('packages/demo/report.api.md', REPORT('// @public\nexport function a(): void;\n\n// @public\nexport function b(): void;'));
    const failed = check();
    expect(failed.status).to.equal(1);
    expect(failed.stderr).to.contain('@svc/demo: its public API changed');
    write('.changeset/brave-fox.md', '---\n"@svc/demo": minor\n---\n\nAdds b().\n');
    expect(check().status).to.equal(0);
  });

  it('asks for a major changeset when a declaration was removed or changed', () => {
    write('packages/demo/report.api.md', REPORT('// @public\nexport function a(x: number): void;'));
    write('.changeset/brave-fox.md', '---\n"@svc/demo": minor\n---\n\nChanges a().\n');
    const failed = check();
    expect(failed.status).to.equal(1);
    expect(failed.stderr).to.contain('must be major');
    write('.changeset/brave-fox.md', "---\n'@svc/demo': major\n---\n\nChanges a().\n");
    expect(check().status).to.equal(0);
  });

  it('ignores comments and imports (documentation is not a surface change)', () => {
    write(
      'packages/demo/report.api.md',
      REPORT('// @public (undocumented)\nexport function a(): void;').replace("import { Knex } from 'knex';", "import type { Knex } from 'knex';"),
    );
    const result = check();
    // The text differs, so a changeset is still asked for, but no major one.
    expect(result.stderr).to.not.contain('must be major');
  });
});
