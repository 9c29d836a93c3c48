/**
 * The load the ops suites put on a cluster and what they check of it afterwards, shared by
 * faults.test.ts and frozen-db.test.ts (one definition: a change to the workload changes both).
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import { type Client, Load, type Outcome, summary, until } from './cluster.js';

/** A signed-in person and their household, as the load uses them. */
export interface LoadUser {
  client: Client;
  householdId: string;
}

/**
 * Load through nginx: the users' events read (page of 5) and written (a new event whose notes are a
 * marker unique to the request, `${phase}-${n}`), half and half, `concurrency` at a time.
 */
export function eventsLoad(users: readonly LoadUser[], phase: string, concurrency = 6): Load {
  return new Load((n) => {
    const u = users[n % users.length]!;
    if (n % 2 === 0) return { kind: 'read', method: 'GET', url: `/api/v1/households/${u.householdId}/events?limit=5`, client: u.client };
    const marker = `${phase}-${n}`;
    return {
      kind: 'write',
      method: 'POST',
      url: `/api/v1/households/${u.householdId}/events`,
      body: {
        date: '2026-12-01',
        eventType: 'Guests',
        servingTime: '18:00',
        availableCookingMinutes: 45,
        notes: marker,
        participants: [{ memberId: null, name: 'Guest' }],
      },
      marker,
      client: u.client,
    };
  }, concurrency);
}

/** Every acknowledged write (201) is in the database exactly once; no write is there twice. Answers how many were acknowledged. */
export async function expectWritesOnce(db: Knex, outcomes: Outcome[]): Promise<number> {
  const acked = outcomes.filter((o) => o.kind === 'write' && o.status === 201).map((o) => o.marker!);
  const tried = outcomes.filter((o) => o.kind === 'write').map((o) => o.marker!);
  const rows: { notes: string; n: number }[] = (await db.raw('select notes, count(*)::int as n from meal_events where notes = any(?) group by notes', [tried]))
    .rows;
  const count = new Map(rows.map((r) => [r.notes, r.n]));
  const missing = acked.filter((m) => count.get(m) !== 1);
  if (missing.length) console.log(JSON.stringify(outcomes.filter((o) => missing.includes(o.marker!))));
  expect(missing, 'acknowledged writes not stored exactly once').to.deep.equal([]);
  expect(
    rows.filter((r) => r.n > 1),
    'writes stored twice',
  ).to.deep.equal([]);
  return acked.length;
}

/**
 * After a fault ends at `from`: waits for a write acknowledged since then, then for 30 answers in a
 * row that all succeed (requests that stalled during the fault may still end after it).
 */
export async function awaitRecovery(load: Load, from: number, what: string): Promise<void> {
  await until(
    `a write acknowledged after ${what}`,
    () => load.since(from).some((o) => o.kind === 'write' && o.status === 201),
    60_000,
    () => summary(load.since(from)),
  );
  const recovered = Date.now();
  await until(
    'steady after recovery',
    () =>
      load.since(recovered).length >= 30 &&
      load
        .since(recovered)
        .slice(-30)
        .every((o) => o.status < 300),
    60_000,
    () => summary(load.since(recovered)),
  );
}
