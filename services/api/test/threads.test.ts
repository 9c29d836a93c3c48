import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../src/config.js';
import { lowerHelperThreadPriority } from '../src/threads.js';

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
});
