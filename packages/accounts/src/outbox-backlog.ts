import type { Knex } from 'knex';

export interface OutboxBacklog {
  /** Mail waiting to go out (not sent, not given up). */
  depth: number;
  /** Seconds since the oldest waiting mail was written; 0 when none waits. */
  oldestAgeSeconds: number;
  /** Mail the worker gave up on after its last attempt (still in the table until housekeeping). */
  gaveUp: number;
}

/**
 * What the mail outbox holds right now, for monitoring (one aggregate query; the host reads it
 * when Prometheus scrapes). A growing depth and age means mail is not going out: SMTP is down or
 * refusing, or no instance runs the worker.
 */
export async function outboxBacklog(knex: Knex, now: Date): Promise<OutboxBacklog> {
  const row = (await knex('mail_outbox')
    .whereNull('sentAt')
    .select(
      knex.raw('count(*) filter (where gave_up_at is null) as depth'),
      knex.raw('min(created_at) filter (where gave_up_at is null) as oldest'),
      knex.raw('count(*) filter (where gave_up_at is not null) as gave_up'),
    )
    .first()) as { depth: string | number; oldest: Date | null; gaveUp: string | number } | undefined;
  const oldest = row?.oldest ? new Date(row.oldest) : undefined;
  return {
    depth: Number(row?.depth ?? 0),
    oldestAgeSeconds: oldest ? Math.max(0, (now.getTime() - oldest.getTime()) / 1000) : 0,
    gaveUp: Number(row?.gaveUp ?? 0),
  };
}
