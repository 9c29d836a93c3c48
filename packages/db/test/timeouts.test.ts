import net from 'node:net';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { createKnex, databaseAnswers, runMigrations } from '../src/index.js';

/**
 * A TCP proxy in front of PostgreSQL that can stop forwarding in both directions (and stall new
 * connections) without closing anything: what a server whose processes are stopped looks like
 * from the client (connections open, no byte back), without stopping the shared server.
 */
class StallingProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  private stalled: net.Socket[] = [];
  frozen = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.server = net.createServer((client) => {
      if (this.frozen) {
        client.pause();
        this.stalled.push(client);
      } else this.connect(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    const pair = { client, upstream };
    this.pairs.add(pair);
    const drop = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on('error', drop);
      s.on('close', drop);
    }
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => client.write(d));
    client.resume();
  }

  freeze(): void {
    this.frozen = true;
    for (const p of this.pairs) {
      p.client.pause();
      p.upstream.pause();
    }
  }

  thaw(): void {
    this.frozen = false;
    for (const p of this.pairs) {
      p.client.resume();
      p.upstream.resume();
    }
    for (const c of this.stalled.splice(0)) if (!c.destroyed) this.connect(c);
  }

  async stop(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream.destroy();
    }
    for (const c of this.stalled) c.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/** What a query became: its error, or its rows. */
async function settled(p: Promise<unknown>): Promise<{ error?: Error }> {
  try {
    await p;
    return {};
  } catch (error) {
    return { error: error as Error };
  }
}

describe("a frozen database: the driver's and the server's own timeouts", function () {
  this.timeout(30_000);
  const UNANSWERED_MS = 300;
  let db: TestDatabase;
  let proxy: StallingProxy;
  let knex: Knex;
  const lines: string[] = [];

  before(async () => {
    db = await createTestDatabase();
    const u = new URL(db.url);
    proxy = new StallingProxy({ host: u.hostname, port: Number(u.port || 5432) });
    await proxy.start();
    u.hostname = '127.0.0.1';
    u.port = String(proxy.port);
    await db.knex.raw('create table writes (n int primary key)');
    const logger = { warn: (_: object, msg: string) => lines.push(msg), error: (_: object, msg: string) => lines.push(msg), debug() {} };
    // One connection: whatever a failed request leaves on it, the next request meets.
    knex = createKnex(u.toString(), { poolMax: 1, statementTimeoutMs: 200, unansweredMs: UNANSWERED_MS, logger });
  });
  after(async () => {
    proxy.thaw();
    await knex?.destroy();
    await proxy?.stop();
    await db?.destroy();
  });

  it('sends statement_timeout and idle_in_transaction_session_timeout to the server, which cancels a slow statement', async () => {
    // A client-side limit far above the statement timeout: the server's cancel answers first, however busy the machine.
    const own = createKnex(db.url, { poolMax: 1, statementTimeoutMs: 200, unansweredMs: 20_000 });
    try {
      const { rows } = await own.raw("select current_setting('statement_timeout') as s, current_setting('idle_in_transaction_session_timeout') as i");
      expect(rows).to.deep.equal([{ s: '200ms', i: '1min' }]);
      const slow = await settled(own.raw('select pg_sleep(5)'));
      expect((slow.error as { code?: string } | undefined)?.code, 'cancelled by the server').to.equal('57014');
    } finally {
      await own.destroy();
    }
  });

  it('a query the server never answers fails with "Query read timeout"; a transaction cut off so is never handed to the next request; the log says so once, and once when it answers again', async () => {
    await knex.raw('select 1'); // the pool's one connection, open before the freeze
    lines.length = 0;
    proxy.freeze();
    // A write in a transaction: its INSERT is sent and never answered; its ROLLBACK cannot be sent either.
    const inTransaction = await settled(knex.transaction(async (trx) => trx('writes').insert({ n: 1 })));
    expect(inTransaction.error?.message).to.match(/Query read timeout/);
    const next = await settled(knex.raw('select 1'));
    expect(next.error?.message, 'a new query while frozen').to.match(/Query read timeout|Timeout acquiring a connection|timeout/i);
    expect(await databaseAnswers(knex, 2000), 'readiness while frozen').to.equal(false);
    proxy.thaw();
    // Back: the next request's autocommit write is its own, not part of the cut-off transaction.
    let stored: Error | undefined;
    for (let attempt = 0; attempt < 20; attempt++) {
      stored = (await settled(knex('writes').insert({ n: 2 }))).error;
      if (!stored) break;
    }
    expect(stored, String(stored)).to.equal(undefined);
    const seen = await db.knex('writes').select('n').orderBy('n');
    expect(seen, 'the write after the outage is committed (seen by another connection)').to.deep.equal([{ n: 2 }]);
    expect(lines.filter((l) => l.startsWith('database not answering'))).to.have.length(1);
    expect(lines.filter((l) => l === 'database answers again')).to.have.length(1);
  });

  it("an instance waiting for another's migrations waits past the pool's read timeout (the lock's wait has none)", async () => {
    const short = createKnex(db.url, { poolMax: 2, statementTimeoutMs: 100, unansweredMs: 200 });
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      // Another instance migrating: it holds the migrations' lock until told.
      const other = db.knex.transaction(async (trx) => {
        await trx.raw('select pg_advisory_xact_lock(7320191226)');
        locked();
        await released;
      });
      await isLocked;
      const migrated = runMigrations(short, [{ name: 'timeouts_test', migrations: [] }]);
      // The server's own clock says how long the waiter has waited: well past the read timeout.
      for (;;) {
        const { rows } = await db.knex.raw(
          "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like 'select pg_advisory_xact_lock%' and clock_timestamp() - query_start > interval '600 milliseconds'",
        );
        if (rows[0].n > 0) break;
      }
      release();
      await other;
      expect(await migrated).to.deep.equal([]);
    } finally {
      await short.destroy();
    }
  });

  it('without a statement timeout (migrations) the client sets no read timeout either', async () => {
    const plain = createKnex(db.url, { poolMax: 1 });
    try {
      const { rows } = await plain.raw("select current_setting('statement_timeout') as s");
      expect(rows).to.deep.equal([{ s: '0' }]);
      expect((plain.client as { connectionSettings: { query_timeout?: number } }).connectionSettings.query_timeout).to.equal(undefined);
    } finally {
      await plain.destroy();
    }
  });
});
