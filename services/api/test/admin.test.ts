import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@svc/db';
import { expect } from 'chai';
import { type Harness, signUp, startHarness } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The operator CLI, compiled as `npm run admin` runs it, as a process of its own. */
function cli(env: Record<string, string>, ...args: string[]): Run {
  const run = spawnSync(process.execPath, ['dist/src/admin.js', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PASSWORD_BREACH_API: 'off', ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A failure as the CLI must show it: the exit code, nothing on stdout, one line on stderr and no stack. */
function expectFailure(run: Run, exitCode: number, line: RegExp): void {
  expect(run.status, `${run.stdout}${run.stderr}`).to.equal(exitCode);
  expect(run.stdout).to.equal('');
  expect(run.stderr.trimEnd().split('\n'), run.stderr).to.have.length(1);
  expect(run.stderr.trimEnd()).to.match(line);
  expect(run.stderr).to.not.match(/\n\s+at |Error:/);
}

const COMMANDS = [
  [],
  ['invite-codes'],
  ['invite-codes', 'create'],
  ['invite-codes', 'list'],
  ['invite-codes', 'revoke'],
  ['ai'],
  ['ai', 'balance'],
  ['ai', 'pause'],
  ['ai', 'resume'],
  ['waitlist'],
  ['waitlist', 'list'],
];

describe('the operator CLI', function () {
  this.timeout(120_000);
  let h: Harness;
  let env: Record<string, string>;
  before(async () => {
    execFileSync(process.execPath, [path.join(root, '../../node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    h = await startHarness({ INTAKE_MODE: 'invite' });
    env = { DATABASE_URL: h.db.url, DATA_DIR: h.dataDir, INTAKE_MODE: 'invite' };
  });
  after(() => h.close());

  it('makes an invite code that admits one household, and pauses and resumes a household’s AI (the service running on the same database)', async () => {
    const made = cli(env, 'invite-codes', 'create');
    expect(made.status, made.stderr).to.equal(0);
    const code = /^created invite code (\S+)$/m.exec(made.stdout)?.[1];
    expect(code, made.stdout).to.be.a('string');
    expect(cli(env, 'invite-codes', 'list').stdout).to.match(new RegExp(`^${code}  used 0 of 1  no expiry$`, 'm'));

    const owner = await signUp(h.app, 'cli-owner@example.com');
    const refused = await owner.post('/api/v1/households').send({ name: 'No code', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' });
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('invite_required');
    const created = await owner.post('/api/v1/households').send({ name: 'With code', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30', inviteCode: code });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const id = created.body.id as string;

    // the CLI's clock is the real one: pause until a date far enough ahead of the harness's clock
    expect(cli(env, 'ai', 'pause', id, '--until', '2099-01-01T00:00:00Z').stdout).to.equal(`paused AI of household ${id} until 2099-01-01T00:00:00.000Z\n`);
    const paused = await owner.post(`/api/v1/households/${id}/rules/parse`).send({ text: 'fish twice a week' });
    expect(paused.status).to.equal(429);
    expect(paused.body.code).to.equal('ai_paused');
    expect(paused.headers['retry-after']).to.equal('Thu, 01 Jan 2099 00:00:00 GMT');
    expect(JSON.parse(cli(env, '--json', 'ai', 'balance', id).stdout).aiPausedUntil).to.equal('2099-01-01T00:00:00.000Z');

    expect(cli(env, 'ai', 'resume', id).stdout).to.equal(`resumed AI of household ${id}\n`);
    expect((await owner.post(`/api/v1/households/${id}/rules/parse`).send({ text: 'fish twice a week' })).status).to.equal(200);
  });

  it('prints --help for every command, exit 0', () => {
    for (const path of COMMANDS) {
      const run = cli(env, ...path, '--help');
      expect(run.status, path.join(' ')).to.equal(0);
      expect(run.stdout, path.join(' ')).to.match(new RegExp(`^Usage: admin${path.length ? ` ${path.join(' ')}` : ''} `));
      expect(run.stderr).to.equal('');
    }
  });

  it('--json: one JSON document on stdout and nothing else', () => {
    const made = cli(env, '--json', 'invite-codes', 'create', '--count', '2', '--max-uses', '3', '--note', 'for the Smiths');
    expect(made.status, made.stderr).to.equal(0);
    const codes = JSON.parse(made.stdout) as { code: string; maxUses: number; note: string }[];
    expect(codes).to.have.length(2);
    expect(codes.map((c) => [c.maxUses, c.note])).to.deep.equal([
      [3, 'for the Smiths'],
      [3, 'for the Smiths'],
    ]);
    const list = JSON.parse(cli(env, '--json', 'invite-codes', 'list').stdout) as { code: string }[];
    expect(list.map((c) => c.code)).to.include.members(codes.map((c) => c.code));
    const revoked = cli(env, 'invite-codes', 'revoke', codes[0]!.code, '--json');
    expect(JSON.parse(revoked.stdout)).to.deep.equal({ code: codes[0]!.code, revoked: true });
    expect(JSON.parse(cli(env, '--json', 'waitlist', 'list').stdout)).to.deep.equal([]);
  });

  it('npx meal-planner-admin --json (the bin, run from the repository): builds first, quietly (no turbo banner), one JSON document on stdout', () => {
    const run = spawnSync('npx', ['--no-install', 'meal-planner-admin', '--json', 'invite-codes', 'create', '--code', 'FROM-NPX'], {
      cwd: path.resolve(root, '../..'),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PASSWORD_BREACH_API: 'off', ...env },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, `${run.stdout}${run.stderr}`).to.equal(0);
    const made = JSON.parse(run.stdout) as { code: string }[];
    expect(made.map((c) => c.code)).to.deep.equal(['FROM-NPX']);
    // turbo's banner and summary are shown only when the build fails
    expect(run.stderr).to.not.match(/turbo|Packages in scope|Tasks:|Cached:/i);
  });

  it('fails with exit 1 and one line for an unknown code, an unknown household, a duplicate code and no database', () => {
    expectFailure(cli(env, 'invite-codes', 'revoke', 'NO-SUCH-CODE'), 1, /^admin: no invite code NO-SUCH-CODE in force$/);
    const nobody = '00000000-0000-4000-8000-000000000000';
    expectFailure(cli(env, 'ai', 'balance', nobody), 1, new RegExp(`^admin: no household ${nobody}$`));
    expectFailure(cli(env, 'ai', 'pause', nobody, '--hours', '2'), 1, new RegExp(`^admin: no household ${nobody}$`));
    expectFailure(cli(env, '--json', 'ai', 'resume', nobody), 1, new RegExp(`^admin: no household ${nobody}$`));
    expect(cli(env, 'invite-codes', 'create', '--code', 'TWICE').status).to.equal(0);
    expectFailure(cli(env, 'invite-codes', 'create', '--code', 'TWICE'), 1, /^admin: invite code TWICE already exists$/);
    const gone = { ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing' };
    expectFailure(cli(gone, 'invite-codes', 'list'), 1, /^admin: cannot reach the database \(DATABASE_URL\): connect ECONNREFUSED/);
    const missing = { ...env, DATABASE_URL: h.db.url.replace(/\/[^/]+$/, '/no_such_database_here') };
    expectFailure(
      cli(missing, '--json', 'waitlist', 'list'),
      1,
      /^admin: cannot reach the database \(DATABASE_URL\): database "no_such_database_here" does not exist$/,
    );
    expectFailure(cli({ ...env, AUTH_RATE_LIMIT: 'many' }, 'invite-codes', 'list'), 1, /^admin: invalid configuration: AUTH_RATE_LIMIT: /);
  });

  it('fails with exit 2 and one line for a command line it does not understand', () => {
    expectFailure(cli(env, 'nonsense'), 2, /^admin: unknown command 'nonsense'/);
    expectFailure(cli(env, 'ai'), 2, /^admin: ai needs a command: balance, pause or resume/);
    expectFailure(cli(env, 'ai', 'balance', 'not-a-uuid'), 2, /a household id is a uuid$/);
    expectFailure(cli(env, 'ai', 'pause', '00000000-0000-4000-8000-000000000000'), 1, /^admin: ai pause needs --until <ISO date-time> or --hours <n>$/);
    expectFailure(cli(env, 'ai', 'pause', '00000000-0000-4000-8000-000000000000', '--until', 'tomorrow'), 2, /not an ISO date-time/);
    expectFailure(cli(env, 'invite-codes', 'create', '--count', '0'), 2, /--count must be a whole number from 1 to 1000$/);
    expectFailure(cli(env, 'invite-codes', 'revoke'), 2, /missing required argument 'code'/);
    expectFailure(cli(env, 'invite-codes', 'list', '--bogus'), 2, /unknown option '--bogus'/);
  });
});

describe('the operator CLI on the embedded PostgreSQL, with and without a running server', function () {
  this.timeout(300_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-admin-embedded-'));
  // No DATABASE_URL: the embedded server in DATA_DIR.
  const env = { DATA_DIR: dataDir, INTAKE_MODE: 'invite' };
  // The service a test starts is killed when the test ends, pass or fail (a timed-out wait leaves it running otherwise).
  let server: ChildProcess | undefined;
  afterEach(() => {
    if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    server = undefined;
  });
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('starts and stops the embedded server itself, uses the one a running service started, and never prints a stack', async () => {
    const alone = cli(env, '--json', 'invite-codes', 'create', '--code', 'EMBEDDED-1');
    expect(alone.status, alone.stderr).to.equal(0);
    expect(JSON.parse(alone.stdout)[0].code).to.equal('EMBEDDED-1');
    expect(alone.stderr).to.equal('');

    const port = await freePort();
    const started = spawn(process.execPath, ['dist/src/main.js'], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...env,
        PORT: String(port),
        HOST: '127.0.0.1',
        PASSWORD_BREACH_API: 'off',
        SHUTDOWN_DRAIN_SECONDS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server = started;
    let out = '';
    const exited = new Promise<number | null>((resolve) => started.on('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        const onData = (d: Buffer) => {
          out += d;
          if (out.includes('"msg":"ready at ')) resolve();
        };
        started.stdout!.on('data', onData);
        started.stderr!.on('data', onData);
        started.once('exit', () => reject(new Error(`the service exited: ${out}`)));
      });
      // While the service runs on it, the CLI uses the same embedded server (and leaves it running).
      const running = cli(env, '--json', 'invite-codes', 'list');
      expect(running.status, running.stderr).to.equal(0);
      expect((JSON.parse(running.stdout) as { code: string }[]).map((c) => c.code)).to.deep.equal(['EMBEDDED-1']);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).to.equal(200);
    } finally {
      started.kill('SIGTERM');
      expect(await exited).to.equal(0);
    }
    const after = cli(env, 'invite-codes', 'revoke', 'EMBEDDED-1');
    expect(after.status, after.stderr).to.equal(0);
    expect(after.stdout).to.equal('revoked invite code EMBEDDED-1\n');
    expectFailure(cli(env, 'invite-codes', 'revoke', 'EMBEDDED-1'), 1, /^admin: no invite code EMBEDDED-1 in force$/);
  });
});
