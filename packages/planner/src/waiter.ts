import type { Knex } from 'knex';
import type pg from 'pg';

/** The PostgreSQL channel a run's final transaction notifies (payload: the plan's id). */
export const RUN_ENDED_CHANNEL = 'planner_run_ended';

/**
 * `Prefer: wait`: waits for the notification a run's final transaction sends (NOTIFY commits with
 * the result), on one LISTEN connection per instance, opened on the first wait and kept. Nothing
 * polls: a waiter wakes on the notification or its own deadline, whichever comes first.
 */
export class RunEndedSignal {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly waiting = new Map<string, Set<() => void>>();
  private closed = false;

  constructor(private readonly knex: Knex) {}

  /** Resolves when the plan's run ended here or elsewhere (true), or after `ms` (false). Call `ended` first, listen, then read again. */
  async listen(planId: string): Promise<{ ended: Promise<boolean>; cancel(): void }> {
    await this.connect();
    let wake!: () => void;
    const ended = new Promise<boolean>((resolve) => {
      wake = () => resolve(true);
    });
    const set = this.waiting.get(planId) ?? new Set();
    set.add(wake);
    this.waiting.set(planId, set);
    const cancel = () => {
      set.delete(wake);
      if (set.size === 0 && this.waiting.get(planId) === set) this.waiting.delete(planId);
    };
    return { ended, cancel };
  }

  private async connect(): Promise<pg.Client> {
    if (this.client) return this.client;
    this.connecting ??= (async () => {
      // A connection of its own, outside the pool: LISTEN holds it for the instance's life.
      const client = (await (this.knex.client as { acquireRawConnection(): Promise<pg.Client> }).acquireRawConnection()) as pg.Client;
      client.on('notification', (msg) => {
        const set = msg.payload ? this.waiting.get(msg.payload) : undefined;
        if (set) for (const wake of [...set]) wake();
      });
      // A lost connection: the next wait opens a new one (waiters in flight end at their deadline).
      client.on('error', () => {
        if (this.client === client) this.client = undefined;
        this.connecting = undefined;
      });
      await client.query(`listen ${RUN_ENDED_CHANNEL}`);
      if (this.closed) {
        await client.end();
        throw new Error('closed');
      }
      this.client = client;
      return client;
    })();
    try {
      return await this.connecting;
    } catch (err) {
      this.connecting = undefined;
      throw err;
    }
  }

  /** Closes the LISTEN connection (the instance stops); waiters end at their deadlines. */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
