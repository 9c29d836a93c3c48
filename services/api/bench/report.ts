/** The report: the table of scenarios, the storm and RSS lines, the verdict table against the targets; JSON with --json. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { args, deepPage, driver, loadBefore, log, opts, PAGE_LIMIT, started } from './options.js';
import { report as profileReport } from './profile-top.js';
import { median, type Row } from './runner.js';
import type { Seeded } from './seed.js';
import type { Rss, Storm } from './storm.js';

/** Judges the rows against the targets and writes the report to stdout (and --json). */
export function writeReport(rows: Row[], storm: Storm | undefined, rss: Rss | undefined, { eventsPageBytes, changesPage }: Seeded): void {
  const byId = (id: string) => rows.find((r) => r.id === id);
  const naiveRps = byId('me-naive')?.rps ?? Number.NaN;
  // The ceiling of an authenticated read (issue 44): Express + helmet + the cookie + ONE round trip.
  const ceilingRps = byId('me-ceiling-db')?.rps ?? Number.NaN;
  const constantRps = byId('me-ceiling')?.rps ?? Number.NaN;
  const ceilingEventsRps = byId('events-ceiling')?.rps ?? Number.NaN;

  const me = byId('me');
  const ceilingRow = byId('me-ceiling-db');
  // Two reads are compared as measured beside GET /me (each round of a read against the GET /me run
  // right before and after it: runner.ts), so the VM's drift between their rounds cancels; without
  // that (a write, an anchor of another phase, --profile) as their medians' ratio. GET /me's own
  // rounds are measured the same way, beside the shorter GET /me runs, and are the control: a read's
  // share of GET /me is its share over GET /me's. The table's req/s are the medians all the same.
  const shareOfMe = (r: Row) => r.ofMeBeside;
  const beside = (a: Row, b: Row) => Number.isFinite(shareOfMe(a)) && Number.isFinite(shareOfMe(b));
  // Otherwise round by round (round i of one against round i of the other: in the writes phase the
  // twins run one after the other), the median of the rounds' ratios.
  const byRound = (a: Row, b: Row) => a.rounds.length > 0 && a.rounds.length === b.rounds.length;
  const ratio = (a: Row, b: Row) =>
    beside(a, b) ? shareOfMe(a) / shareOfMe(b) : byRound(a, b) ? median(a.rounds.map((x, i) => x.rps / b.rounds[i]!.rps)) : a.rps / b.rps;
  /** What `ratio` compared, and the medians' ratio beside it. */
  const how = (a: Row, b: Row) =>
    `${beside(a, b) ? 'measured beside GET /me' : byRound(a, b) ? 'round by round' : 'medians'}; the medians: ${pct(a.rps / b.rps)}`;
  const pass = (ok: boolean | undefined) => (ok === undefined ? 'n/a' : ok ? 'PASS' : 'MISS');
  const verdicts: { target: string; measured: string; verdict: string }[] = [];
  const verdict = (target: string, measured: string, ok: boolean | undefined) => verdicts.push({ target, measured, verdict: pass(ok) });
  const fin = (...xs: (number | undefined)[]) => xs.every((x) => x !== undefined && Number.isFinite(x));
  const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
  const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '—');
  const pct = (x: number) => (Number.isFinite(x) ? `${Math.round(x * 100)} %` : '—');

  verdict(
    'GET /me ≥ 90 % of the ceiling (Express + helmet + cookie + one round trip)',
    me && ceilingRow && fin(me.rps, ceilingRps)
      ? `${pct(ratio(me, ceilingRow))} (${Math.round(me.rps)} vs ${Math.round(ceilingRps)} req/s; ${how(me, ceilingRow)})`
      : '—',
    me && ceilingRow && fin(me.rps, ceilingRps) ? ratio(me, ceilingRow) >= 0.9 : undefined,
  );
  verdict(
    'GET /me ≥ 8× naive',
    me && fin(me.rps, naiveRps) ? `${f2(me.rps / naiveRps)}× (${Math.round(me.rps)} vs ${Math.round(naiveRps)} req/s)` : '—',
    me && fin(me.rps, naiveRps) ? me.rps >= 8 * naiveRps : undefined,
  );
  verdict(
    "GET /me p99 ≤ 1.5× the ceiling's p99",
    me && ceilingRow ? `${f1(me.p99)} vs ${f1(ceilingRow.p99)} ms (${f2(me.p99 / ceilingRow.p99)}×)` : '—',
    me && ceilingRow ? me.p99 <= 1.5 * ceilingRow.p99 : undefined,
  );
  // The floor under events page 1: what the ceiling loses by answering the same page instead of
  // /me (transport of ~35 kB and its serialization, nothing else), and where the service stands
  // against it; the target's lower bound (80 % of GET /me) is compared with the floor too.
  const first = byId('events-first');
  const ceilingEvents = byId('events-ceiling');
  const floor = ceilingEvents
    ? {
        eventsPageBytes,
        ceilingMeRps: constantRps,
        ceilingEventsRps,
        ceilingEventsOfCeilingMe: ceilingEventsRps / constantRps,
        serviceEventsFirstRps: first?.rps ?? Number.NaN,
        serviceEventsFirstOfCeilingEvents: (first?.rps ?? Number.NaN) / ceilingEventsRps,
        targetRps: 0.8 * (me?.rps ?? Number.NaN),
        targetOfCeilingEvents: (0.8 * (me?.rps ?? Number.NaN)) / ceilingEventsRps,
        cpuMsPerRequest: {
          ceilingMe: byId('me-ceiling')?.cpuMsPerRequest ?? Number.NaN,
          ceilingEvents: ceilingEvents.cpuMsPerRequest,
          serviceMe: me?.cpuMsPerRequest ?? Number.NaN,
          serviceEventsFirst: first?.cpuMsPerRequest ?? Number.NaN,
        },
      }
    : undefined;
  // The changes feed's pages (100 resources, each as its GET) have targets of their own (below).
  for (const r of rows.filter((x) => x.authenticatedGet && !x.id.startsWith('changes'))) {
    let measured = me ? `${pct(ratio(r, me))} of GET /me (${Math.round(r.rps)} req/s; ${how(r, me)})` : '—';
    if (r.id === 'events-first' && floor) {
      measured += `; floor: ceiling events page = ${pct(floor.ceilingEventsOfCeilingMe)} of ceiling /me (${Math.round(floor.ceilingEventsRps)} vs ${Math.round(floor.ceilingMeRps)} req/s); service events page = ${pct(floor.serviceEventsFirstOfCeilingEvents)} of the ceiling's events page; 80 % of GET /me (${Math.round(floor.targetRps)} req/s) = ${pct(floor.targetOfCeilingEvents)} of it`;
    }
    // "Within 20 % of GET /me's requests/s" read as a floor: at least 80 % of it. A read that is faster
    // than GET /me (a cached events page) is not a miss of a speed target.
    verdict(`${r.label} within 20 % of GET /me req/s (≥ 80 %)`, measured, me ? ratio(r, me) >= 0.8 : undefined);
  }
  // Issue 34: the bearer path as fast as the cookie path, in the same run.
  for (const [withToken, withCookie] of [
    ['me-bearer', 'me'],
    ['household-bearer', 'household'],
  ] as const) {
    const t = byId(withToken);
    const c = byId(withCookie);
    verdict(
      `${t?.label ?? withToken} ≥ 90 % of the cookie path's req/s`,
      t && c ? `${pct(ratio(t, c))} (${Math.round(t.rps)} vs ${Math.round(c.rps)} req/s; ${how(t, c)})` : '—',
      t && c ? ratio(t, c) >= 0.9 : undefined,
    );
  }
  // Issue 32: a rename enqueues its news (a job, then the notification) on the causing write; the
  // same PATCH without a rename enqueues nothing.
  const renaming = byId('patch-household');
  const settings = byId('patch-household-settings');
  verdict(
    'PATCH household with a rename (news enqueued) within 10 % of one without',
    renaming && settings
      ? `${pct(ratio(renaming, settings))} (${Math.round(renaming.rps)} vs ${Math.round(settings.rps)} req/s; ${how(renaming, settings)}); ${renaming.queries} vs ${settings.queries} statements`
      : '—',
    renaming && settings ? ratio(renaming, settings) >= 0.9 : undefined,
  );
  /** A feed's page N against its page 1: within 10 % of its req/s. */
  const deepPageVerdict = (feed: string, page: number, first: Row | undefined, deep: Row | undefined) =>
    verdict(
      `${feed} page ${page.toLocaleString('en')} within 10 % of page 1`,
      first && deep
        ? `${pct(ratio(deep, first))} of page 1 req/s (${Math.round(deep.rps)} vs ${Math.round(first.rps)}; ${how(deep, first)}); p99 ${f1(deep.p99)} vs ${f1(first.p99)} ms`
        : '—',
      first && deep ? ratio(deep, first) >= 0.9 : undefined,
    );
  deepPageVerdict('events', deepPage, first, byId('events-deep'));
  const changesFirst = byId('changes');
  const changesDeep = byId('changes-deep');
  // Issue 44: a page of 100 changes ≥ 80 % of a page of 100 events; a poll with nothing new ≥ 90 % of GET /me.
  for (const c of [changesFirst, changesDeep]) {
    verdict(
      `${c?.label ?? 'changes page'} ≥ 80 % of events page 1`,
      c && first ? `${pct(ratio(c, first))} (${Math.round(c.rps)} vs ${Math.round(first.rps)} req/s; ${how(c, first)}); ${c.queries} statements` : '—',
      c && first ? ratio(c, first) >= 0.8 : undefined,
    );
  }
  const poll = byId('changes-empty');
  verdict(
    'GET changes, nothing new ≥ 90 % of GET /me',
    poll && me ? `${pct(ratio(poll, me))} (${Math.round(poll.rps)} vs ${Math.round(me.rps)} req/s; ${how(poll, me)}); ${poll.queries} statement(s)` : '—',
    poll && me ? ratio(poll, me) >= 0.9 : undefined,
  );
  // Issue 44: each spread write ≥ the naive stack doing the same write on the same rows.
  for (const id of ['patch-spread', 'post-event-spread', 'put-event-spread']) {
    const w = byId(id);
    const n = byId(`${id}-naive`);
    verdict(
      `${w?.label ?? id} ≥ 1.0× naive`,
      w && n ? `${f2(ratio(w, n))}× (${Math.round(w.rps)} vs ${Math.round(n.rps)} req/s; ${how(w, n)}); ${w.queries} vs ${n.queries} statements` : '—',
      w && n ? ratio(w, n) >= 1 : undefined,
    );
  }
  deepPageVerdict('changes', changesPage, changesFirst, changesDeep);
  verdict(
    'storm: GET /me p99 during ≤ 1.5× before',
    storm ? `${f1(storm.meDuring.p99)} vs ${f1(storm.meBefore.p99)} ms (${f2(storm.meDuring.p99 / storm.meBefore.p99)}×)` : '—',
    storm ? storm.meDuring.p99 <= 1.5 * storm.meBefore.p99 : undefined,
  );
  verdict(
    'storm: service event-loop delay p99 ≤ 20 ms',
    storm ? `${f1(storm.eventLoopP99During)} ms (max ${f1(storm.eventLoopMaxDuring)} ms)` : '—',
    storm ? storm.eventLoopP99During <= 20 : undefined,
  );
  verdict('RSS ≤ 230 MB (Node 24)', rss ? `max ${f1(rss.maxMb)} MB` : '—', rss ? rss.maxMb <= 230 : undefined);
  verdict(
    'RSS flat (max − min ≤ 10 %)',
    rss ? `${rss.afterRoundMb.map(f1).join(' / ')} MB: spread ${pct((rss.maxMb - rss.minMb) / rss.minMb)}` : '—',
    rss ? rss.maxMb - rss.minMb <= 0.1 * rss.minMb : undefined,
  );

  const loadAfter = os.loadavg();
  const lines: string[] = [];
  lines.push(
    `${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), Node ${process.version}, ${started.toISOString()}; load average before ${loadBefore.map(f2).join(' ')}, after ${loadAfter.map(f2).join(' ')}`,
  );
  lines.push(
    `${opts.rounds} round(s) of ${opts.seconds} s at ${opts.connections} connections per scenario, median shown${opts.profile ? '; service under --cpu-prof' : ''}; load generator (${driver}) on the same cores`,
  );
  lines.push('');
  lines.push(
    '| scenario | req/s | p50 ms | p99 ms | errors / non-2xx | queries/req | CPU ms/req | PostgreSQL CPU ms/req | load generator CPU ms/req | × naive GET /me | % of ceiling (1 round trip) |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    lines.push(
      `| ${r.label} | ${Math.round(r.rps)} | ${f1(r.p50)} | ${f1(r.p99)} | ${r.errors} / ${r.non2xx} | ${r.queries ?? '?'} | ${f2(r.cpuMsPerRequest)} | ${f2(r.postgresCpuMsPerRequest)} | ${f2(r.clientCpuMsPerRequest)} | ${f2(r.rps / naiveRps)} | ${pct(r.rps / ceilingRps)} |`,
    );
  }
  lines.push('');
  if (storm) {
    lines.push(
      `Login storm (${opts.stormLogins} concurrent logins, bcrypt cost 12, GET /me at ${opts.stormConnections} connections): GET /me p99 ${f1(storm.meBefore.p99)} ms before → ${f1(storm.meDuring.p99)} ms during (${Math.round(storm.meBefore.rps)} → ${Math.round(storm.meDuring.rps)} req/s); logins ${f1(storm.logins.rps)}/s, p50 ${f1(storm.logins.p50)} ms, p99 ${f1(storm.logins.p99)} ms, errors / non-2xx ${storm.logins.errors} / ${storm.logins.non2xx}; service event-loop delay p99 ${f1(storm.eventLoopP99Before)} ms before → ${f1(storm.eventLoopP99During)} ms during (max ${f1(storm.eventLoopMaxDuring)} ms)`,
    );
  }
  if (rss) {
    lines.push(
      `RSS of the service (VmRSS): ${f1(rss.startMb)} MB at rest, then ${rss.afterRoundMb.map(f1).join(' / ')} MB after each of ${opts.rssRounds} rounds of ${opts.rssSeconds} s mixed load (me, household, rules, events page 1 and ${deepPage}, PATCH) at ${rss.rps.map((x) => Math.round(x)).join(' / ')} req/s; errors / non-2xx ${rss.errors} / ${rss.non2xx}; V8 heap (total / used) ${rss.heap.map((h) => `${f1(h.heapTotalMb)} / ${f1(h.heapUsedMb)}`).join(', ')} MB`,
    );
  }
  lines.push('');
  lines.push('| target | measured | verdict |');
  lines.push('|---|---|---|');
  for (const v of verdicts) lines.push(`| ${v.target} | ${v.measured} | ${v.verdict} |`);
  process.stdout.write(`\n${lines.join('\n')}\n`);

  // Each profile is written when its process exits (already, for all but the shared service).
  const profiles: { scenario: string; file: string; summary: string }[] = [];
  if (opts.profile) {
    for (const r of rows.filter((x) => x.app === 'service')) {
      const file = path.join(opts.profile, `${r.id}.cpuprofile`);
      if (!fs.existsSync(file)) continue;
      const summary = profileReport(file, 25, r.cpuMsPerRequest);
      profiles.push({ scenario: r.id, file, summary });
      process.stdout.write(`\n${r.label}: CPU ${f2(r.cpuMsPerRequest)} ms per request\n${summary}\n`);
    }
  }

  if (args.json) {
    const report = {
      machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model.trim(), node: process.version, loadavgBefore: loadBefore, loadavgAfter: loadAfter },
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      options: { ...opts, only: opts.only ? [...opts.only] : undefined, deepPage, pageLimit: PAGE_LIMIT },
      scenarios: rows.map((r) => ({ ...r, ratioToNaiveMe: r.rps / naiveRps, ratioToCeiling: r.rps / ceilingRps })),
      transportFloor: floor,
      storm,
      rss,
      verdicts,
      profiles: profiles.map(({ scenario, file }) => ({ scenario, file })),
    };
    fs.writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
    log(`wrote ${args.json}`);
  }
}
