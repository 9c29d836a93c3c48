/**
 * The bench's side of each measured process (service, naive anchor, ceiling anchor): never part
 * of the app being measured. The process prints `port=<n>` on stdout once it listens, then answers
 * the bench over the IPC channel of `child_process.fork`:
 *
 *   { cmd: 'stats' }      → { eld: { p50, p99, max } (ms of delay beyond the 5 ms sampling interval), cpu: process.cpuUsage(), rssKb, queries, node }
 *   { cmd: 'eld-reset' }  → { ok: true }   (restarts the event-loop delay histogram)
 *   { cmd: 'exit' }       → closes the listener and exits 0, so a --cpu-prof profile is written
 *   { cmd: 'fixture', name, body } → { ok } (hands the process data the bench made while seeding,
 *                           e.g. the service's real events page for the ceiling to answer with;
 *                           ok is false when the process takes no fixture of that name)
 */
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface ChildStats {
  eld: { p50: number; p99: number; max: number };
  cpu: NodeJS.CpuUsage;
  rssKb: number;
  /** process.memoryUsage() of the process (bytes): how much of the RSS is V8's heap. */
  memory?: NodeJS.MemoryUsage;
  /** process.version of the process: every measured process runs on the same Node. */
  node: string;
  /** SQL queries the process has sent so far, when it counts them (the naive anchor does). */
  queries?: number;
}

export type HarnessRequest = { id: number; cmd: 'stats' | 'eld-reset' | 'exit' } | { id: number; cmd: 'fixture'; name: string; body: string };

/** VmRSS of a process from /proc (kB), or NaN off Linux. */
export function rssKb(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Announces the port and serves the bench's requests; `close` runs before exiting. */
export function attachHarness(
  server: Server,
  opts: { queries?: () => number; close?: () => Promise<void>; fixture?: (name: string, body: string) => boolean } = {},
): void {
  // The histogram holds whole intervals of its sampling timer; the delay is what exceeds RESOLUTION.
  const RESOLUTION = 5;
  const eld = monitorEventLoopDelay({ resolution: RESOLUTION });
  eld.enable();
  const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION) * 100) / 100);
  process.on('message', (msg: HarnessRequest) => {
    const reply = (body: object) => process.send?.({ id: msg.id, ...body });
    if (msg.cmd === 'stats') {
      const stats: ChildStats = {
        eld: { p50: ms(eld.percentile(50)), p99: ms(eld.percentile(99)), max: ms(eld.max) },
        cpu: process.cpuUsage(),
        rssKb: rssKb(process.pid),
        memory: process.memoryUsage(),
        queries: opts.queries?.(),
        node: process.version,
      };
      reply(stats);
    } else if (msg.cmd === 'eld-reset') {
      eld.reset();
      reply({ ok: true });
    } else if (msg.cmd === 'fixture') {
      reply({ ok: opts.fixture?.(msg.name, msg.body) ?? false });
    } else if (msg.cmd === 'exit') {
      server.closeAllConnections();
      server.close();
      void (opts.close?.() ?? Promise.resolve()).finally(() => process.exit(0));
    }
  });
  // The bench going away takes its children with it.
  process.on('disconnect', () => process.exit(0));
  const port = (server.address() as AddressInfo).port;
  process.stdout.write(`port=${port}\n`);
}

/** Listens on 127.0.0.1 on a free port. */
export async function listen(server: Server): Promise<Server> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.keepAliveTimeout = 65_000;
  return server;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ; 100 on every Linux the bench runs on). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (ms, user + system) that every process named `postgres` has used so far, with what its
 * ended children used (the postmaster reaps its backends: a backend that exits during a scenario
 * keeps counting), read from /proc: the database's share of a scenario is the difference across
 * it. NaN off Linux.
 */
export function postgresCpuMs(): number {
  try {
    let ticks = 0;
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue; // gone since the listing
      }
      // pid (comm) state ppid … : comm may hold spaces, so fields count from the last ')'.
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      // utime, stime, cutime, cstime: fields 14 to 17 of stat
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    }
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}
