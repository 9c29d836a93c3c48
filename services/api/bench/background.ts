/**
 * Background work scenarios (issues 32 and 33), in this process on a database of their own:
 *
 * - `series-extend`: H households (default 10,000) with a daily series each, whose window is a day
 *   behind (as on the morning after the last extension): one pass of the daily extension
 *   (SeriesExtender.extendAll, batches of 200 series per transaction) timed, with this process's
 *   event-loop delay meanwhile (a request arriving then would wait that long). Target (issue 33):
 *   ≤ 60 s for 10,000 households, event-loop p99 ≤ 20 ms.
 * - `fan-out`: internal notifications to households of 10 people with 3 phones each (30
 *   deliveries each) delivered to the local FCM fake: one household, then F households (default
 *   1,000) at once, with one job runner and with two. Reported: deliveries per second, time from the
 *   first send to the last delivery, and any phone that got a notification twice or not at all.
 *   Targets (issue 32): ≥ 1,000 deliveries/s from one runner, two ≥ 1.6× one, none lost or doubled.
 *
 *   npx tsx --conditions=source services/api/bench/background.ts [--households 10000] [--fanout-households 1000] [--only series-extend,fan-out]
 *
 * Numbers from a shared, loaded machine are for checking that the scenarios run, not verdicts.
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { HouseholdProfile } from '@svc/contracts';
import { createLogger, ManualClock, systemClock } from '@svc/http-kit';
import * as jobs from '@svc/jobs';
import * as mealEvents from '@svc/meal-events';
import * as push from '@svc/push';
import { createTestDatabase, FakeFcm } from '@svc/test-support';

const { values: args } = parseArgs({
  options: {
    households: { type: 'string' },
    'fanout-households': { type: 'string' },
    only: { type: 'string' },
  },
});
const HOUSEHOLDS = Number(args.households ?? 10_000);
const FANOUT_HOUSEHOLDS = Number(args['fanout-households'] ?? 1_000);
const only = args.only ? new Set(args.only.split(',')) : undefined;
const wanted = (id: string) => !only || only.has(id);
const log = (line: string) => process.stdout.write(`${line}\n`);
const quiet = createLogger({ level: 'silent' });
const profile = async (id: string): Promise<HouseholdProfile> => ({ id, country: 'NO', timeZoneId: 'Europe/Oslo', preferredLanguage: 'nb' });

async function seriesExtend(): Promise<void> {
  const db = await createTestDatabase([jobs.migrations, mealEvents.migrations, mealEvents.queues]);
  try {
    const clock = new ManualClock('2026-11-22T09:00:00.000Z');
    const { today, horizon } = mealEvents.windowOf(clock.now(), 'Europe/Oslo');
    // One daily series per household, written through the day before today's horizon.
    const t0 = performance.now();
    await db.knex.raw(
      `insert into meal_event_series (id, household_id, repeat, template, exceptions, written_through, created_at, updated_at)
       select gen_random_uuid(), gen_random_uuid(), '{"frequency":"daily","interval":1,"byDay":null,"until":null,"count":null}'::jsonb,
              jsonb_build_object('date', ?::text, 'eventType', 'Activity', 'servingTime', '17:00', 'availableCookingMinutes', 20, 'notes', '', 'participants', '[]'::jsonb),
              '{}', ?::date - 1, now(), now()
         from generate_series(1, ?)`,
      [today, horizon, HOUSEHOLDS],
    );
    log(`series-extend: seeded ${HOUSEHOLDS} households' daily series in ${Math.round(performance.now() - t0)} ms`);
    const extender = new mealEvents.SeriesExtender({ series: new mealEvents.SeriesStore(db.knex), clock, profiles: profile, random: randomBytes });
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const started = performance.now();
    const result = await extender.extendAll();
    const ms = performance.now() - started;
    loop.disable();
    const p99 = loop.percentile(99) / 1e6;
    log(
      `series-extend: ${result.series} series, ${result.written} occurrences written in ${(ms / 1000).toFixed(1)} s ` +
        `(${Math.round(result.written / (ms / 1000))}/s); event-loop delay p50 ${(loop.percentile(50) / 1e6).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms` +
        ` | targets: ≤ 60 s for 10,000 households, p99 ≤ 20 ms`,
    );
  } finally {
    await db.destroy();
  }
}

async function fanOut(): Promise<void> {
  const db = await createTestDatabase([jobs.migrations, push.migrations]);
  const fcm = new FakeFcm();
  await fcm.start();
  try {
    const provider = new push.FcmProvider({
      projectId: fcm.projectId,
      credentials: fcm.serviceAccount,
      url: fcm.url,
      tokenUrl: fcm.tokenUrl,
      clock: systemClock,
      timeoutMs: 10_000,
    });
    /** household → its 10 people */
    const people = new Map<string, string[]>();
    const households = Array.from({ length: FANOUT_HOUSEHOLDS + 1 }, () => crypto.randomUUID());
    for (const h of households)
      people.set(
        h,
        Array.from({ length: 10 }, () => crypto.randomUUID()),
      );
    const owners = [...people.entries()].flatMap(([, users]) => users);
    // Three phones per person, every switch on, in one INSERT.
    await db.knex.raw(
      `insert into push_devices (token_hash, token, user_id, platform, provider, list_changes, household_news, run_done, reminders, last_seen_at, created_at, updated_at)
       select sha256(convert_to(u || '-' || k, 'UTF8')), u || '-' || k, u::uuid, 'android', 'fcm', true, true, true, true, now(), now(), now()
         from unnest(?::text[]) u, generate_series(1, 3) k`,
      [owners],
    );
    const runners = async (count: number, sendTo: string[], label: string) => {
      await db.knex.raw('delete from pgboss.job');
      fcm.delivered.length = 0;
      const queues = Array.from(
        { length: count },
        () => new jobs.JobQueue({ knex: db.knex, clock: systemClock, logger: quiet, pollIntervalMs: 100, concurrency: 32 }),
      );
      const services = queues.map(
        (q) =>
          new push.NotificationService({
            knex: db.knex,
            clock: systemClock,
            jobs: q,
            accountIds: async (h) => people.get(h) ?? [],
            profiles: profile,
            providers: { fcm: provider },
            logger: quiet,
          }),
      );
      const expected = sendTo.length * 30;
      const started = performance.now();
      // Every household notified at once (as the planner's nightly run would), through the first instance's service.
      await Promise.all(sendTo.map((h) => services[0]!.send(h, { kind: 'runDone', title: 'Plan ready', body: 'Next week is planned' })));
      const enqueued = performance.now();
      for (const q of queues) await q.start();
      while (fcm.delivered.length < expected && performance.now() - started < 600_000) await new Promise((r) => setTimeout(r, 50));
      const done = performance.now();
      await Promise.all(queues.map((q) => q.stop()));
      const seen = new Map<string, number>();
      for (const d of fcm.delivered) {
        const key = `${d.token} ${String((d.message.data as Record<string, unknown>)?.notificationId)}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      const doubled = [...seen.values()].filter((n) => n > 1).length;
      const deliverMs = done - enqueued;
      const rate = fcm.delivered.length / (deliverMs / 1000);
      log(
        `fan-out ${label}, ${count} runner(s): ${fcm.delivered.length}/${expected} deliveries, ${doubled} doubled; sends ${Math.round(enqueued - started)} ms, ` +
          `request to last delivery ${Math.round(done - started)} ms, ${Math.round(rate)} deliveries/s`,
      );
      return rate;
    };
    await runners(1, households.slice(0, 1), 'one household of 10 people × 3 phones');
    const one = await runners(1, households.slice(1), `${FANOUT_HOUSEHOLDS} households at once`);
    const two = await runners(2, households.slice(1), `${FANOUT_HOUSEHOLDS} households at once`);
    log(`fan-out: two runners ${(two / one).toFixed(2)}× one | targets: ≥ 1,000 deliveries/s from one, two ≥ 1.6× one, none lost or doubled`);
    await provider.close();
  } finally {
    await fcm.stop();
    await db.destroy();
  }
}

if (wanted('series-extend')) await seriesExtend();
if (wanted('fan-out')) await fanOut();
process.exit(0);
