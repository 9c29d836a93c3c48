import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import bcryptjs from 'bcryptjs';
import { expect } from 'chai';
import request from 'supertest';
import { PasswordHasher, prehash } from '../src/PasswordHasher.js';
import { createWorld, linkIn, login, mailsTo, PASSWORD, register, signedUp, type World } from './helpers.js';

const BREACHED = 'password1234';

/** A local stand-in for the k-anonymity range API: it knows one breached password and records what it was asked. */
async function startRangeApi(mode: { hang?: boolean; status?: number } = {}) {
  const asked: string[] = [];
  const sha1 = createHash('sha1').update(BREACHED).digest('hex').toUpperCase();
  const server = http.createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    if (mode.hang) return; // never answers
    if (mode.status) {
      res.writeHead(mode.status).end();
      return;
    }
    const prefix = req.url!.split('/').pop()!;
    const lines = ['0018A45C4D1DEF81644B54AB7F969B88D65:0', '00D4F6E8FA6EECAD2A3AA415EEC418D38EC:2'];
    if (prefix === sha1.slice(0, 5)) lines.push(`${sha1.slice(5)}:3861493`);
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end(lines.join('\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('passwords: bcrypt without the 72-byte truncation', () => {
  let w: World;
  before(async () => {
    w = await createWorld({ options: { tuning: { hashWorkers: 2 } } }); // default cost 12
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('stores a cost-12 bcrypt hash and no trace of the password', async () => {
    await register(request(w.app), 'ada@example.test', PASSWORD);
    const { passwordHash } = await w.db.knex('accounts').select('passwordHash').first();
    expect(passwordHash).to.match(/^\$2b\$12\$[./A-Za-z0-9]{53}$/);
    expect(passwordHash).to.not.contain(PASSWORD);
  });

  it('tells apart two passwords that share their first 72 bytes', async () => {
    const head = 'ü'.repeat(36); // 72 bytes in UTF-8
    expect(Buffer.byteLength(head)).to.equal(72);
    await register(request(w.app), 'ada@example.test', `${head}-one`);
    expect((await login(request.agent(w.app), 'ada@example.test', `${head}-two`)).status).to.equal(401);
    expect((await login(request.agent(w.app), 'ada@example.test', `${head}-one`)).status).to.equal(200);
  });

  it('feeds bcrypt base64(SHA-256(password)): 44 ASCII characters whatever the length', () => {
    expect(prehash('x'.repeat(256))).to.have.length(44);
    expect(prehash('a')).to.equal(createHash('sha256').update('a').digest('base64'));
  });
});

describe('PasswordHasher', () => {
  // Every child a test starts ends with the test, pass or fail (not by spawn's own timeout later).
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  // Made by bcryptjs (the library that wrote every stored hash before @node-rs/bcrypt): `$2b$`, cost 12, of
  // prehash('correct horse battery staple'); the `$2a$` one with a salt relabelled `$2a$` (bcryptjs 2 wrote those).
  const STAPLE = 'correct horse battery staple';
  const BCRYPTJS_2B_COST_12 = '$2b$12$Hp3qr5n9Y0m7k.lbaJcIxuw1V8ehLXogI4AJOwTQ4zEE.h6lhO3La';
  const BCRYPTJS_2A_COST_12 = '$2a$12$78fp1ktbDZl2RedbhOEpkeX5UXlvuFq5NHKY10rexJKTVmxKSpk4e';

  it('verifies the hashes bcryptjs stored before ($2b$ and $2a$, cost 12, prehashed), and refuses a wrong password', async () => {
    const hasher = new PasswordHasher({ workers: 2 });
    try {
      expect(bcryptjs.compareSync(prehash(STAPLE), BCRYPTJS_2B_COST_12), 'the fixture is what bcryptjs accepts').to.equal(true);
      expect(await Promise.all([hasher.verify(STAPLE, BCRYPTJS_2B_COST_12), hasher.verify(STAPLE, BCRYPTJS_2A_COST_12)])).to.deep.equal([true, true]);
      expect(await hasher.verify('correct horse battery stapler', BCRYPTJS_2B_COST_12)).to.equal(false);
      expect(await hasher.verifyOrBurn(STAPLE, BCRYPTJS_2B_COST_12)).to.equal('ok');
      // Made now by bcryptjs too, at a cost of 4, so a change in either library shows here.
      const fresh = bcryptjs.hashSync(prehash('a1'), 4);
      expect(await hasher.verify('a1', fresh)).to.equal(true);
    } finally {
      await hasher.close();
    }
  });

  it('writes `$2b$` hashes of the prehash that bcryptjs verifies, with more jobs than slots', async () => {
    const hasher = new PasswordHasher({ cost: 4, workers: 2 });
    const passwords = ['a1', 'b2', 'c3', 'd4', 'e5'];
    try {
      const hashes = await Promise.all(passwords.map((p) => hasher.hash(p)));
      for (const h of hashes) expect(h).to.match(/^\$2b\$04\$[./A-Za-z0-9]{53}$/);
      expect(new Set(hashes).size, 'a salt of its own each').to.equal(5);
      expect(hashes.map((h, i) => bcryptjs.compareSync(prehash(passwords[i]!), h))).to.deep.equal([true, true, true, true, true]);
      expect(bcryptjs.compareSync(passwords[0]!, hashes[0]!), 'bcrypt got the prehash, not the password').to.equal(false);
      expect(await Promise.all(hashes.map((h, i) => hasher.verify(passwords[i]!, h)))).to.deep.equal([true, true, true, true, true]);
      expect(await hasher.verify('wrong', hashes[0]!)).to.equal(false);
      expect(await hasher.verify('a1', 'not a bcrypt hash')).to.equal(false);
    } finally {
      await hasher.close();
    }
  });

  it('burns a bcrypt of the same cost for an unknown address and answers false', async () => {
    const hasher = new PasswordHasher({ workers: 1 });
    try {
      expect(await hasher.verifyOrBurn(STAPLE, null)).to.equal(false);
      expect(await hasher.verifyOrBurn(STAPLE, undefined)).to.equal(false);
    } finally {
      await hasher.close();
    }
  });

  it('refuses a size below one', () => {
    expect(() => new PasswordHasher({ workers: 0 })).to.throw(RangeError);
    expect(() => new PasswordHasher({ workers: 1.5 })).to.throw(RangeError);
  });

  it('close() lets the running job finish, refuses the waiting ones and any later one', async () => {
    const hasher = new PasswordHasher({ cost: 4, workers: 1 });
    const running = hasher.hash('a1');
    const waiting = [hasher.hash('b2'), hasher.verify('c3', 'never checked')];
    const outcomes = Promise.allSettled(waiting);
    await hasher.close();
    expect(await running).to.match(/^\$2b\$04\$/);
    expect((await outcomes).map((o) => (o.status === 'rejected' ? (o.reason as Error).message : o.status))).to.deep.equal([
      'password hasher closed',
      'password hasher closed',
    ]);
    let refused: unknown;
    await hasher.verify('a1', await running).catch((err: unknown) => {
      refused = err;
    });
    expect((refused as Error | undefined)?.message).to.equal('password hasher closed');
  });

  it('after close(), nothing of it keeps the process alive: a process that used it ends by itself', async function () {
    this.timeout(60_000);
    const here = fileURLToPath(new URL('.', import.meta.url));
    const module = JSON.stringify(pathToFileURL(path.join(here, '../src/PasswordHasher.ts')).href);
    // A job in flight when close() is called, and nothing that ends the process but the empty event loop.
    const script = `
      const { PasswordHasher } = await import(${module});
      const hasher = new PasswordHasher({ cost: 4, workers: 2 });
      const hash = await hasher.hash('a1');
      const late = hasher.verify('a1', hash);
      await hasher.close();
      console.log(JSON.stringify({ verified: await late }));`;
    const child = spawn(process.execPath, ['--import', 'tsx/esm', '--conditions=source', '--input-type=module', '-e', script], {
      cwd: path.join(here, '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
    expect({ code, signal, err }).to.deep.equal({ code: 0, signal: null, err: '' });
    expect(JSON.parse(out)).to.deep.equal({ verified: true });
  });

  it('where the platform has no native binary, bcryptjs stands in with the same hashes', async function () {
    this.timeout(60_000);
    const here = fileURLToPath(new URL('.', import.meta.url));
    const module = JSON.stringify(pathToFileURL(path.join(here, '../src/PasswordHasher.ts')).href);
    const known = bcryptjs.hashSync(prehash('old password'), 4);
    // A preload makes loading @node-rs/bcrypt fail, as on a platform npm found no binary for.
    const block = `const M = require('node:module'); const load = M._load; M._load = function (r, ...a) { if (r === '@node-rs/bcrypt') throw new Error('no binary'); return load.call(this, r, ...a); };`;
    const script = `
      const { PasswordHasher, BCRYPT_NATIVE } = await import(${module});
      const hasher = new PasswordHasher({ cost: 4, workers: 1 });
      const made = await hasher.hash('new password');
      const result = { native: BCRYPT_NATIVE, old: await hasher.verify('old password', ${JSON.stringify(known)}), made: await hasher.verify('new password', made), wrong: await hasher.verify('nope', made), prefix: made.slice(0, 4) };
      await hasher.close();
      console.log(JSON.stringify(result));`;
    const preload = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-no-native-')), 'block.cjs');
    fs.writeFileSync(preload, block);
    const child = spawn(process.execPath, ['--require', preload, '--import', 'tsx/esm', '--conditions=source', '--input-type=module', '-e', script], {
      cwd: path.join(here, '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect({ code, err }).to.deep.equal({ code: 0, err: '' });
    expect(JSON.parse(out)).to.deep.equal({ native: false, old: true, made: true, wrong: false, prefix: '$2b$' });
  });
});

describe('passwords seen in a breach (k-anonymity range API)', () => {
  let w: World;
  let api: Awaited<ReturnType<typeof startRangeApi>>;
  before(async () => {
    api = await startRangeApi();
    w = await createWorld({ config: { passwordBreachApi: api.url } });
  });
  after(async () => {
    await w.close();
    await api.close();
  });
  beforeEach(async () => {
    await w.reset();
    api.asked.length = 0;
  });

  it('refuses a breached password at sign-up with 400 password_pwned, sending only the 5-hex prefix of its SHA-1', async () => {
    const res = await register(request(w.app), 'ada@example.test', BREACHED);
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('password_pwned');
    const sha1 = createHash('sha1').update(BREACHED).digest('hex').toUpperCase();
    expect(api.asked).to.deep.equal([`GET /range/${sha1.slice(0, 5)}`]);
    expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });

  it('accepts a password the API does not know (padding lines with count 0 do not count)', async () => {
    expect((await register(request(w.app), 'ada@example.test', PASSWORD)).status).to.equal(200);
  });

  it('refuses a breached password on change and on reset', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const change = await agent.post('/api/v1/me/password').send({ currentPassword: PASSWORD, newPassword: BREACHED });
    expect(change.status).to.equal(400);
    expect(change.body.code).to.equal('password_pwned');
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'ada@example.test', /reset/i)[0]!);
    const reset = await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...params, newPassword: BREACHED });
    expect(reset.status).to.equal(400);
    expect(reset.body.code).to.equal('password_pwned');
  });

  it('accepts the password and logs a warning when the API is unreachable, answers an error, or is too slow', async () => {
    const hanging = await startRangeApi({ hang: true });
    const failing = await startRangeApi({ status: 503 });
    try {
      const cases = [
        w.another({ passwordBreachApi: 'http://127.0.0.1:1' }),
        w.another({ passwordBreachApi: failing.url }),
        w.another({ passwordBreachApi: hanging.url }, { tuning: { bcryptCost: 4, hashWorkers: 1, breachTimeoutMs: 200 } }),
      ];
      let i = 0;
      const traceIds: string[] = [];
      for (const { app } of cases) {
        const res = await register(request(app), `user${i++}@example.test`, BREACHED);
        expect(res.status).to.equal(200);
        traceIds.push(String(res.headers['x-trace-id']));
      }
      expect(hanging.asked).to.have.length(1);
      const warnings = w.logLines.filter((l) => l.level === 40 && /breach API/.test(String(l.msg)));
      expect(warnings).to.have.length(3);
      // Each warning names its request's trace id and why: the cause under "fetch failed", the status, the timeout.
      expect(warnings.map((l) => l.traceId)).to.deep.equal(traceIds);
      expect((warnings[0] as { cause?: { message?: string } }).cause?.message).to.equal('bad port'); // fetch refuses port 1 itself
      expect((warnings[1] as { err: { message: string } }).err.message).to.contain('503');
      expect((warnings[2] as { err: { name: string } }).err.name).to.equal('TimeoutError');
      expect(JSON.stringify(warnings)).to.not.contain(BREACHED);
    } finally {
      await hanging.close();
      await failing.close();
    }
  });
});
