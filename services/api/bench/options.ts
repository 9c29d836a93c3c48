/** The bench's command line (run.ts describes every option), the constants the scenarios share, and its log. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pickDriver } from './load.js';

export const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string' },
    connections: { type: 'string' },
    rounds: { type: 'string' },
    events: { type: 'string' },
    'rss-seconds': { type: 'string' },
    'storm-logins': { type: 'string' },
    'storm-connections': { type: 'string' },
    json: { type: 'string' },
    profile: { type: 'string' },
    only: { type: 'string' },
    'fanout-households': { type: 'string' },
    'fanout-latency-ms': { type: 'string' },
    quick: { type: 'boolean', default: false },
    driver: { type: 'string' },
  },
});
export const driver = pickDriver(args.driver);
const quick = args.quick === true;
export const num = (v: string | undefined, full: number, q: number = full) => (v === undefined ? (quick ? q : full) : Number(v));
export const opts = {
  seconds: num(args.seconds, 10, 3),
  connections: num(args.connections, 50),
  rounds: num(args.rounds, 3, 1),
  events: num(args.events, 100_000, 10_000),
  rssSeconds: num(args['rss-seconds'], 60, 10),
  rssRounds: 3,
  stormLogins: num(args['storm-logins'], 20),
  stormConnections: num(args['storm-connections'], 20),
  warmupSeconds: quick ? 1 : 2,
  quick,
  profile: args.profile ? path.resolve(args.profile) : undefined,
  only: args.only ? new Set(args.only.split(',').map((s) => s.trim())) : undefined,
};
export const PAGE_LIMIT = 100;
/** The event the spread writes POST and PUT (each connection on its own household). */
export const SPREAD_EVENT = { date: '2026-12-01', eventType: 'Guests', servingTime: '18:00', availableCookingMinutes: 30, notes: 'spread', participants: [] };
export const deepPage = Math.max(2, Math.min(1000, Math.floor(opts.events / PAGE_LIMIT)));
export const wanted = (id: string) => !opts.only || opts.only.has(id);
if (opts.profile) fs.mkdirSync(opts.profile, { recursive: true });

export const started = new Date();
export const loadBefore = os.loadavg();
export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
