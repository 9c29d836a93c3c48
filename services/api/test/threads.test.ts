import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../src/config.js';
import { idleThreads, lowerHelperThreadPriority } from '../src/threads.js';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('HELPER_THREAD_NICE', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-threads-'));
  const taskDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tasks-'));
  after(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(taskDir, { recursive: true, force: true });
  });

  it('defaults to 19, reads 0–19 and refuses what is not a nice value', () => {
    expect(loadConfig({ DATA_DIR: dataDir }).helperThreadNice).to.equal(19);
    expect(loadConfig({ DATA_DIR: dataDir, HELPER_THREAD_NICE: '0' }).helperThreadNice).to.equal(0);
    expect(loadConfig({ DATA_DIR: dataDir, HELPER_THREAD_NICE: '10' }).helperThreadNice).to.equal(10);
    for (const bad of ['-1', '20', 'low', '1.5']) expect(() => loadConfig({ DATA_DIR: dataDir, HELPER_THREAD_NICE: bad }), bad).to.throw(ConfigError);
    expect(loadConfig({ DATA_DIR: dataDir }).threadpoolIdle).to.equal(true);
    expect(loadConfig({ DATA_DIR: dataDir, THREADPOOL_IDLE: 'false' }).threadpoolIdle).to.equal(false);
  });

  it('idleThreads runs chrt --idle per thread, counts the ones it changed, and gives up without chrt', async () => {
    const calls: string[][] = [];
    const run = async (file: string, args: string[]) => {
      calls.push([file, ...args]);
      if (args[3] === '2') throw Object.assign(new Error('EPERM'), { code: 1 });
    };
    expect(await idleThreads([1, 2, 3], run)).to.equal(2);
    expect(calls).to.deep.equal([
      ['chrt', '--idle', '--pid', '0', '1'],
      ['chrt', '--idle', '--pid', '0', '2'],
      ['chrt', '--idle', '--pid', '0', '3'],
    ]);
    const missing = async () => {
      throw Object.assign(new Error('spawn chrt ENOENT'), { code: 'ENOENT' });
    };
    expect(await idleThreads([1, 2], missing)).to.equal(0);
  });

  it('lowers every thread but the event loop, skips threads already as nice or gone, and does nothing at 0 or without a task list', async () => {
    // A task list as /proc/self/task has it: the event loop (100), three helpers, one that is
    // already nicer (103), one that ends before it is read (104), one that ends while set (105).
    for (const tid of ['100', '101', '102', '103', '104', '105']) fs.mkdirSync(path.join(taskDir, tid), { recursive: true });
    const nice = new Map<number, number>([
      [100, 0],
      [101, 0],
      [102, 5],
      [103, 19],
      [105, 0],
    ]);
    const set: Array<[number, number]> = [];
    const options = {
      taskDir,
      mainThreadId: 100,
      getPriority: (tid: number) => nice.get(tid),
      setPriority: (tid: number, value: number) => {
        if (tid === 105) throw new Error('ESRCH');
        set.push([tid, value]);
      },
    };
    expect(await lowerHelperThreadPriority(19, options)).to.equal(2);
    expect(set.sort((a, b) => a[0] - b[0])).to.deep.equal([
      [101, 19],
      [102, 19],
    ]);
    set.length = 0;
    expect(await lowerHelperThreadPriority(0, options)).to.equal(0);
    expect(await lowerHelperThreadPriority(19, { ...options, taskDir: path.join(taskDir, 'none') })).to.equal(0);
    expect(set).to.deep.equal([]);
    for (const bad of [-1, 20, 1.5]) {
      let error: unknown;
      await lowerHelperThreadPriority(bad, options).catch((err: unknown) => {
        error = err;
      });
      expect(error, String(bad)).to.be.instanceOf(RangeError);
    }
  });

  it('on Linux, gives libuv’s pool (started by it when nothing had started it yet) and V8’s workers the nice value; the event loop keeps its own', function () {
    if (process.platform !== 'linux') this.skip();
    // A CommonJS process has not used libuv's pool yet when its first line runs (an ES module
    // entry has: the loader reads files through it): the pool's threads must be there, lowered.
    const script = `
      const fs = require('node:fs'); const os = require('node:os');
      const before = fs.readdirSync('/proc/self/task').length;
      const { lowerHelperThreadPriority } = require(${JSON.stringify(path.join(here, '../src/threads.ts'))});
      lowerHelperThreadPriority(19).then((lowered) => fs.stat('.', () => {
        const threads = fs.readdirSync('/proc/self/task').map((tid) => ({ tid: Number(tid), nice: os.getPriority(Number(tid)) }));
        process.stdout.write(JSON.stringify({ pid: process.pid, before, lowered, threads }));
      }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['-r', 'tsx/cjs', '-e', script], { cwd: path.join(here, '..'), encoding: 'utf8' })) as {
      pid: number;
      before: number;
      lowered: number;
      threads: Array<{ tid: number; nice: number }>;
    };
    const main = out.threads.find((t) => t.tid === out.pid);
    const helpers = out.threads.filter((t) => t.tid !== out.pid);
    expect(main?.nice).to.equal(0);
    // libuv's pool (4 threads unless UV_THREADPOOL_SIZE says otherwise) started after the first line.
    expect(out.threads.length).to.be.at.least(out.before + 4);
    expect(helpers.map((t) => t.nice)).to.deep.equal(helpers.map(() => 19));
    expect(out.lowered).to.equal(helpers.length);
  });

  it('on Linux, finds libuv’s pool by the threads that run its jobs (UV_THREADPOOL_SIZE of them) and puts it under SCHED_IDLE, the other helpers at nice 19', function () {
    if (process.platform !== 'linux') this.skip();
    this.timeout(20_000);
    // After prioritizeEventLoop: each thread's nice and policy (stat fields 19 and 41), and how much
    // CPU each gained while UV_THREADPOOL_SIZE more pool jobs ran.
    const script = `
      const fs = require('node:fs'); const crypto = require('node:crypto');
      const { prioritizeEventLoop } = require(${JSON.stringify(path.join(here, '../src/threads.ts'))});
      const stat = (tid) => { const s = fs.readFileSync('/proc/self/task/' + tid + '/stat', 'utf8'); const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
        return { tid: Number(tid), nice: Number(f[16]), policy: Number(f[38]), ticks: Number(f[11]) + Number(f[12]) }; };
      const all = () => fs.readdirSync('/proc/self/task').map(stat);
      prioritizeEventLoop(19, true).then(async (result) => {
        const before = all();
        const size = Number(process.env.UV_THREADPOOL_SIZE);
        await Promise.all(Array.from({ length: size }, (_, i) => new Promise((ok) => crypto.pbkdf2('again ' + i, 'x', 150000, 64, 'sha512', ok))));
        const after = all();
        const gained = Object.fromEntries(after.map((t) => [t.tid, t.ticks - (before.find((b) => b.tid === t.tid)?.ticks ?? t.ticks)]));
        process.stdout.write(JSON.stringify({ pid: process.pid, result, threads: after, gained }));
      });`;
    const hasChrt = (() => {
      try {
        execFileSync('chrt', ['--version'], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    })();
    for (const size of [4, 2]) {
      const out = JSON.parse(
        execFileSync(process.execPath, ['-r', 'tsx/cjs', '-e', script], {
          cwd: path.join(here, '..'),
          encoding: 'utf8',
          env: { ...process.env, UV_THREADPOOL_SIZE: String(size) },
        }),
      ) as {
        pid: number;
        result: { lowered: number; pool: number[]; poolPolicy: string };
        threads: Array<{ tid: number; nice: number; policy: number }>;
        gained: Record<string, number>;
      };
      const { pool, poolPolicy } = out.result;
      expect(pool, `size ${size}`).to.have.length(size);
      expect(poolPolicy).to.equal(hasChrt ? 'idle' : 'nice');
      for (const t of out.threads) {
        if (t.tid === out.pid) expect([t.nice, t.policy], 'event loop').to.deep.equal([0, 0]);
        else if (pool.includes(t.tid)) expect([t.nice, t.policy], `pool thread ${t.tid}`).to.deep.equal([19, hasChrt ? 5 : 0]);
        else expect([t.nice, t.policy], `helper thread ${t.tid}`).to.deep.equal([19, 0]);
      }
      // The threads found are the ones that run pool jobs: each gained CPU while the next jobs ran.
      for (const tid of pool) expect(out.gained[tid], `pool thread ${tid}`).to.be.above(0);
    }
  });
});
