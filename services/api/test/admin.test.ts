import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { type Harness, signUp, startHarness } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The operator CLI, compiled as `npm run admin` runs it, against the harness's database. */
function admin(h: Harness, ...args: string[]): string {
  return execFileSync(process.execPath, ['dist/src/admin.js', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: h.db.url, DATA_DIR: h.dataDir, PASSWORD_BREACH_API: 'off', INTAKE_MODE: 'invite' },
    encoding: 'utf8',
  });
}

describe('the operator CLI', function () {
  this.timeout(60_000);
  let h: Harness;
  before(async () => {
    execFileSync(process.execPath, [path.join(root, '../../node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    h = await startHarness({ INTAKE_MODE: 'invite' });
  });
  after(() => h.close());

  it('makes an invite code that admits one household, and pauses and resumes a household’s AI', async () => {
    const made = admin(h, 'invite-codes', 'create');
    const code = /^created invite code (\S+)$/m.exec(made)?.[1];
    expect(code, made).to.be.a('string');
    expect(admin(h, 'invite-codes', 'list')).to.contain(`"code":"${code}"`);

    const owner = await signUp(h.app, 'cli-owner@example.com');
    const refused = await owner.post('/api/v1/households').send({ name: 'No code', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('invite_required');
    const created = await owner.post('/api/v1/households').send({ name: 'With code', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30', inviteCode: code });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const id = created.body.id as string;

    // the CLI's clock is the real one: pause until a date far enough ahead of the harness's clock
    expect(admin(h, 'ai', 'pause', id, '--until', '2099-01-01T00:00:00Z')).to.equal(`paused AI of household ${id} until 2099-01-01T00:00:00.000Z\n`);
    const paused = await owner.post(`/api/v1/households/${id}/rules/parse`).send({ text: 'fish twice a week' });
    expect(paused.status).to.equal(429);
    expect(paused.headers['retry-after']).to.equal('Thu, 01 Jan 2099 00:00:00 GMT');
    expect(JSON.parse(admin(h, 'ai', 'balance', id)).aiPausedUntil).to.equal('2099-01-01T00:00:00.000Z');

    expect(admin(h, 'ai', 'resume', id)).to.equal(`resumed AI of household ${id}\n`);
    expect((await owner.post(`/api/v1/households/${id}/rules/parse`).send({ text: 'fish twice a week' })).status).to.equal(200);
  });

  it('answers a wrong command with its usage and exit code 2', () => {
    let status = 0;
    let stderr = '';
    try {
      admin(h, 'nonsense', 'here');
    } catch (err) {
      status = (err as { status: number }).status;
      stderr = String((err as { stderr: Buffer | string }).stderr);
    }
    expect(status).to.equal(2);
    expect(stderr).to.match(/^usage: npm run admin -- <command>/);
  });
});
