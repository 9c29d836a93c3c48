import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createTestDatabase, type TestDatabase } from '../../test-support/src/index.js';
import { createKnex, DatabaseNotAnsweringError, type DatabaseWatch, databaseAnswers, databaseWatch } from '../src/index.js';

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

/** Settles `p` into what it became, so a test can look at a query that is still under way. */
function outcome<T>(p: Promise<T>): { state: 'pending' | 'fulfilled' | 'rejected'; error?: unknown; at?: number } {
  const o: { state: 'pending' | 'fulfilled' | 'rejected'; error?: unknown; at?: number } = { state: 'pending' };
  p.then(
    () => Object.assign(o, { state: 'fulfilled', at: performance.now() }),
    (error) => Object.assign(o, { state: 'rejected', error, at: performance.now() }),
  );
  return o;
}

/** Lets pending I/O callbacks and microtasks run (no timer, no wall-clock wait). */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('a frozen database (the connection watch)', function () {
  this.timeout(30_000);
  let db: TestDatabase;
  let proxy: StallingProxy;
  let knex: Knex;
  let watch: DatabaseWatch;
  let t = 0;

  before(async () => {
    db = await createTestDatabase();
    const u = new URL(db.url);
    proxy = new StallingProxy({ host: u.hostname, port: Number(u.port || 5432) });
    await proxy.start();
    u.hostname = '127.0.0.1';
    u.port = String(proxy.port);
    await db.knex.raw('create table writes (n int primary key)');
    const quiet = { warn() {}, error() {}, debug() {} };
    knex = createKnex(u.toString(), { poolMax: 4, statementTimeoutMs: 5000, unansweredMs: 1000, watchClock: () => t, logger: quiet });
    watch = databaseWatch(knex)!;
    expect(watch).to.not.equal(undefined);
  });
  after(async () => {
    proxy.thaw();
    await knex?.destroy();
    await proxy?.stop();
    await db?.destroy();
  });

  it('fails waiting and new queries at once after ~1 s without a reply (a probe does not answer either), then recovers by itself when a probe answers', async () => {
    await Promise.all([knex.raw('select 1'), knex.raw('select 2')]); // two pooled connections
    await knex('writes').insert({ n: 1 });
    // The pool may still be opening a connection it began for the two selects (one finished and
    // served the other): frozen mid-handshake, that connection would wait from t = 0, not t = 10,
    // and the watch would rightly count it (a slow CI machine did). Let the pool settle first.
    const pool = (knex.client as { pool: { numPendingCreates(): number } }).pool;
    while (pool.numPendingCreates() > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    proxy.freeze();
    t += 10;
    const stuck = [outcome(knex.raw('select 1')), outcome(knex('writes').insert({ n: 2 }))];
    await turns();
    t += 499;
    watch.check();
    expect(watch.frozen, 'not yet: 499 ms').to.equal(false);
    t += 1;
    watch.check(); // 500 ms without a reply: a probe starts (through the frozen proxy: it stalls)
    await turns();
    t += 499;
    watch.check();
    expect(watch.frozen, 'not yet: 999 ms').to.equal(false);
    expect(stuck.map((s) => s.state)).to.deep.equal(['pending', 'pending']);
    t += 1;
    watch.check(); // 1000 ms without a reply on any connection, the probe silent for 500 ms: frozen
    expect(watch.frozen).to.equal(true);
    await turns();
    for (const s of stuck) {
      expect(s.state).to.equal('rejected');
      expect(s.error).to.be.instanceOf(DatabaseNotAnsweringError);
      expect((s.error as { code: string }).code).to.equal('EDBNOTANSWERING');
    }
    // New requests fail at once, without waiting for a connection or an answer; readiness says no.
    const started = performance.now();
    const fresh = outcome(knex.raw('select 3'));
    const inTrx = outcome(knex.transaction((trx) => trx('writes').insert({ n: 3 })));
    await turns();
    expect(fresh.state).to.equal('rejected');
    expect(inTrx.state).to.equal('rejected');
    expect(performance.now() - started).to.be.below(200);
    expect(await databaseAnswers(knex)).to.equal(false);

    // Still frozen: each probe is given 1 s (by the clock), then replaced.
    t += 1000;
    watch.check();
    expect(watch.frozen).to.equal(true);
    proxy.thaw();
    await watch.probed(); // the stalled probe goes through now, on the real network
    if (watch.frozen) {
      t += 1000;
      watch.check();
      await watch.probed();
    }
    expect(watch.frozen, 'a probe answered').to.equal(false);
    expect((await knex.raw('select 4 as n')).rows).to.deep.equal([{ n: 4 }]);
    await knex('writes').insert({ n: 5 });
    // The write cut off mid-flight was not acknowledged, and nothing half-done survives.
    const rows = (await db.knex('writes').select('n').orderBy('n')).map((r: { n: number }) => r.n);
    expect(rows).to.include.members([1, 5]);
    expect(rows).to.not.include(3);
  });

  it('takes a slow query for what it is: the probe answers, nothing fails', async () => {
    expect(watch.frozen).to.equal(false);
    const slow = outcome(knex.raw('select pg_sleep(0.3), 1 as n'));
    await turns();
    t += 600;
    watch.check(); // quiet for 600 ms by the clock: a probe starts and answers (the server is fine)
    await watch.probed();
    t += 600;
    watch.check(); // quiet again for 600 ms: another probe, which answers too
    await watch.probed();
    expect(watch.frozen).to.equal(false);
    t += 600;
    watch.check();
    await watch.probed();
    expect(watch.frozen).to.equal(false);
    while (slow.state === 'pending') await turns(1);
    expect(slow.state, String(slow.error)).to.equal('fulfilled');
  });

  it('does not wrap a pool with the watch turned off', async () => {
    const plain = createKnex(db.url, { poolMax: 1, unansweredMs: 0 });
    try {
      expect(databaseWatch(plain)!.frozen).to.equal(false);
      expect((await plain.raw('select 1 as n')).rows).to.deep.equal([{ n: 1 }]);
    } finally {
      await plain.destroy();
    }
  });
});
