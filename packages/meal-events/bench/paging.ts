/**
 * Paging benchmark: 100,000 events in one household, then page 1 and page 1,000 (limit 100) through
 * the store, timed over REPS repetitions, with EXPLAIN (ANALYZE, BUFFERS) of both queries.
 *
 *   cd packages/meal-events && TEST_DATABASE_URL=postgres://… npm run bench
 *
 * Uses TEST_DATABASE_URL, else DATABASE_URL (else an embedded PostgreSQL); works in a scratch
 * database of its own, dropped at the end. REPS (default 200) sets the repetitions.
 */
import { randomUUID } from 'node:crypto';
import { createTestDatabase } from '@svc/test-support';
import type { Knex } from 'knex';
import { type EventPosition, migrations, ObjectionMealEventStore, type PageRequest } from '../src/index.js';

const EVENTS = 100_000;
const LIMIT = 100;
const DEPTH = 1_000;
const REPS = Number(process.env.REPS ?? 200);

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  'Rows Removed by Filter'?: number;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function explain(knex: Knex, q: Knex.QueryBuilder): Promise<{ text: string; scan: PlanNode; root: PlanNode; ms: number }> {
  const { sql, bindings } = q.toSQL();
  const res = await knex.raw(`explain (analyze, buffers, format json) ${sql}`, bindings as Knex.RawBinding[]);
  const doc = Object.values(res.rows[0] as Record<string, unknown>)[0] as [{ Plan: PlanNode; 'Execution Time': number }];
  const root = doc[0].Plan;
  let scan = root;
  while (scan.Plans?.length && !/Scan/.test(scan['Node Type'])) scan = scan.Plans[0]!;
  const lines: string[] = [];
  const walk = (n: PlanNode, depth: number) => {
    lines.push(
      `${'  '.repeat(depth)}${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}: rows=${n['Actual Rows']} loops=${n['Actual Loops']} buffers hit=${n['Shared Hit Blocks']} read=${n['Shared Read Blocks']}${n['Rows Removed by Filter'] !== undefined ? ` removed by filter=${n['Rows Removed by Filter']}` : ''}`,
    );
    if (n['Index Cond']) lines.push(`${'  '.repeat(depth + 1)}Index Cond: ${n['Index Cond']}`);
    for (const c of n.Plans ?? []) walk(c, depth + 1);
  };
  walk(root, 1);
  return { text: lines.join('\n'), scan, root, ms: doc[0]['Execution Time'] };
}

async function main(): Promise<void> {
  process.env.TEST_DATABASE_URL ??= process.env.DATABASE_URL;
  const db = await createTestDatabase([migrations]);
  const { knex } = db;
  try {
    const household = randomUUID();
    let t = process.hrtime.bigint();
    // 8 events a day over ~34 years, serving times in pairs so that ties on date+time are ordered by id.
    await knex.raw(
      `insert into meal_events (id, household_id, date, event_type, serving_time, available_cooking_minutes, notes, participants, created_at, updated_at)
       select gen_random_uuid(), ?::uuid, date '2000-01-01' + (g / 8), (array['Guests','EatingOut','Away','Activity'])[1 + g % 4],
              time '17:00' + ((g % 8) / 2) * interval '30 minutes', 30 + g % 60, '', '[]'::jsonb, now(), now()
         from generate_series(0, ? - 1) g`,
      [household, EVENTS],
    );
    await knex.raw('analyze meal_events');
    console.log(`inserted ${EVENTS} events in ${(Number(process.hrtime.bigint() - t) / 1e6).toFixed(0)} ms`);

    const store = new ObjectionMealEventStore(knex);
    const first: PageRequest = { from: null, to: null, after: null, limit: LIMIT };

    // Walk the cursor once to page 1,000, exactly as a client would (and check it ends there).
    t = process.hrtime.bigint();
    let after: EventPosition | null = null;
    let pages = 0;
    let seen = 0;
    let depthAfter: EventPosition | null = null;
    for (;;) {
      const page = await store.page(household, { ...first, after });
      pages += 1;
      seen += (JSON.parse(page.items) as unknown[]).length;
      if (pages === DEPTH - 1) depthAfter = page.last;
      if (!page.last) break;
      after = page.last;
    }
    console.log(`walked the cursor through ${pages} pages (${seen} events) in ${(Number(process.hrtime.bigint() - t) / 1e6).toFixed(0)} ms`);
    if (pages !== DEPTH || seen !== EVENTS || !depthAfter) throw new Error(`expected ${DEPTH} pages of ${EVENTS} events`);
    const deep: PageRequest = { ...first, after: depthAfter };

    const times = { first: [] as number[], deep: [] as number[] };
    for (let i = 0; i < 20; i++) {
      await store.page(household, first);
      await store.page(household, deep);
    }
    for (let i = 0; i < REPS; i++) {
      // Interleaved, so both see the same machine load.
      for (const [name, req] of [
        ['first', first],
        ['deep', deep],
      ] as const) {
        const s = process.hrtime.bigint();
        const page = await store.page(household, req);
        times[name].push(Number(process.hrtime.bigint() - s) / 1e6);
        if ((JSON.parse(page.items) as unknown[]).length !== LIMIT) throw new Error('short page');
      }
    }
    console.log(`\nstore.page(limit ${LIMIT}), ${REPS} repetitions each:`);
    console.log(`  page 1     median ${median(times.first).toFixed(3)} ms`);
    console.log(`  page ${DEPTH}  median ${median(times.deep).toFixed(3)} ms`);

    const e1 = await explain(knex, store.pageQuery(household, first));
    const e2 = await explain(knex, store.pageQuery(household, deep));
    console.log(`\nEXPLAIN (ANALYZE, BUFFERS) page 1 (execution ${e1.ms.toFixed(3)} ms):\n${e1.text}`);
    console.log(`\nEXPLAIN (ANALYZE, BUFFERS) page ${DEPTH} (execution ${e2.ms.toFixed(3)} ms):\n${e2.text}`);
    console.log(`\nrows read by the scan: page 1 = ${e1.scan['Actual Rows']}, page ${DEPTH} = ${e2.scan['Actual Rows']} (limit + 1 = ${LIMIT + 1})`);

    // For contrast only: what OFFSET paging would cost at the same depth.
    const offset = knex('mealEvents')
      .select('id')
      .where('householdId', household)
      .orderBy(['mealEvents.date', 'mealEvents.servingTime', 'mealEvents.id'])
      .offset((DEPTH - 1) * LIMIT)
      .limit(LIMIT + 1);
    const e3 = await explain(knex, offset);
    console.log(`\n(contrast) OFFSET ${(DEPTH - 1) * LIMIT} on the same index: execution ${e3.ms.toFixed(3)} ms, scan rows ${e3.scan['Actual Rows']}`);
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
