/**
 * Behind PgBouncer in transaction mode (Debian's pgbouncer, started by the suite in front of the
 * machine's PostgreSQL): two instances start at once through it (the migration lock must be a
 * transaction's, not a session's), and a short journey works (sign-up, sign-in, a household,
 * events written and paged, a password change that revokes another session).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createKnex } from '@svc/db';
import { adminDatabaseUrl } from '@svc/test-support';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { Client, findOrInstall, freePort, Instance, PgBouncer, requirePart } from './cluster.js';

describe('ops: behind PgBouncer in transaction mode', function () {
  this.timeout(180_000);
  let admin: Knex;
  let dbName: string;
  let bouncer: PgBouncer;
  const instances: Instance[] = [];

  before(async function () {
    const bin = requirePart(this, findOrInstall('pgbouncer', 'pgbouncer'));
    const adminUrl = await adminDatabaseUrl();
    admin = createKnex(adminUrl, { poolMax: 1 });
    dbName = `ops_pgb_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    await admin.raw(`create database "${dbName}"`);
    // The server-side statement limit comes from the database (or role) settings: through a
    // transaction pooler the service does not send it at connect (DB_TRANSACTION_POOLING).
    await admin.raw(`alter database "${dbName}" set statement_timeout = '5s'`);
    const target = new URL(adminUrl);
    bouncer = new PgBouncer(bin, {
      host: target.hostname,
      port: Number(target.port || 5432),
      database: dbName,
      user: decodeURIComponent(target.username || 'postgres'),
      password: decodeURIComponent(target.password),
    });
    await bouncer.start();
    const env = () => ({
      DATABASE_URL: bouncer.url(),
      DB_TRANSACTION_POOLING: 'true',
      SESSION_SECRET: randomBytes(48).toString('base64url'),
      PASSWORD_BREACH_API: 'off',
      SHUTDOWN_DRAIN_SECONDS: '0',
      PASSWORD_HASH_WORKERS: '1',
      TRUST_PROXY: 'loopback',
      DATA_DIR: `/tmp/${dbName}`,
    });
    for (let k = 0; k < 2; k++) instances.push(new Instance(`pgb-${k + 1}`, await freePort(), await freePort(), env));
  });

  after(async () => {
    await Promise.all(instances.map((i) => i.stop('SIGKILL')));
    await bouncer?.stop();
    // The instances' DATA_DIR: without SMTP_URL their mail went to .eml files there.
    if (dbName) fs.rmSync(`/tmp/${dbName}`, { recursive: true, force: true });
    if (dbName) await admin.raw(`drop database if exists "${dbName}" with (force)`);
    await admin?.destroy();
  });

  it('two instances start at once through it (migrations once), and a journey works across them', async () => {
    const secret = randomBytes(48).toString('base64url');
    for (const i of instances) i.start({ SESSION_SECRET: secret });
    await Promise.all(instances.map((i) => i.waitReady())).catch((err: Error) => {
      throw new Error(`${err.message}\npgbouncer log:\n${bouncer.log().slice(-3000)}`);
    });
    expect(instances.flatMap((i) => i.lines('"migrations applied"'))).to.have.length(1);
    const [a, b] = instances as [Instance, Instance];
    const user = new Client(a.url);
    const reg = await user.call('POST', '/api/v1/auth/register', { email: 'bouncer@example.com', password: 'correct horse battery', displayName: 'B' });
    expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
    const other = new Client(b.url);
    expect((await other.call('POST', '/api/v1/auth/login', { email: 'bouncer@example.com', password: 'correct horse battery' })).status).to.equal(200);
    const household = await user.call('POST', '/api/v1/households', { name: 'Pooled', timeZoneId: 'Europe/Berlin', defaultDinnerTime: '18:30' }, b.url);
    expect(household.status, JSON.stringify(household.body)).to.equal(201);
    const id = household.body.id as string;
    // Parallel writes over both instances: transactions interleave on PgBouncer's few server connections.
    const writes = await Promise.all(
      Array.from({ length: 20 }, (_, k) =>
        user.call(
          'POST',
          `/api/v1/households/${id}/events`,
          {
            date: `2026-12-${String((k % 28) + 1).padStart(2, '0')}`,
            eventType: 'Away',
            servingTime: '19:00',
            availableCookingMinutes: 30,
            notes: `pgb-${k}`,
            participants: [],
          },
          instances[k % 2]!.url,
        ),
      ),
    );
    expect(writes.map((w) => w.status)).to.deep.equal(Array(20).fill(201));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await user.call(
        'GET',
        `/api/v1/households/${id}/events?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        undefined,
        instances[seen.length % 2]!.url,
      );
      expect(page.status).to.equal(200);
      seen.push(...page.body.items.map((e: { notes: string }) => e.notes));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.sort()).to.deep.equal(Array.from({ length: 20 }, (_, k) => `pgb-${k}`).sort());
    const changed = await user.call('POST', '/api/v1/me/password', { currentPassword: 'correct horse battery', newPassword: 'another horse battery' });
    expect(changed.status).to.equal(204);
    expect((await other.call('GET', '/api/v1/me')).status).to.equal(401);
    expect((await user.call('GET', '/api/v1/me', undefined, b.url)).status).to.equal(200);
    // The server-side limit is in force on PgBouncer's server connections (from the database setting).
    const pooled = createKnex(bouncer.url(), { poolMax: 1, transactionPooling: true });
    try {
      expect(Object.values((await pooled.raw('show statement_timeout')).rows[0])).to.deep.equal(['5s']);
    } finally {
      await pooled.destroy();
    }
    // Without DB_TRANSACTION_POOLING the pool sends statement_timeout at connect, which PgBouncer
    // refuses: the instance stops at start-up (exit 1) and says why.
    const unaware = new Instance('pgb-unaware', await freePort(), await freePort(), () => ({
      DATABASE_URL: bouncer.url(),
      SESSION_SECRET: secret,
      PASSWORD_BREACH_API: 'off',
      SHUTDOWN_DRAIN_SECONDS: '0',
      PASSWORD_HASH_WORKERS: '1',
      DATA_DIR: `/tmp/${dbName}`,
    }));
    instances.push(unaware);
    unaware.start();
    expect(await unaware.exited).to.equal(1);
    expect(unaware.lines('"start-up failed"').map((l) => (l.err as { message?: string })?.message)).to.deep.equal([
      'unsupported startup parameter: statement_timeout',
    ]);
    // Restarting through it finds nothing to migrate and takes the lock again (a session lock left behind would hang here).
    expect(await a.stop('SIGTERM')).to.equal(0);
    a.start({ SESSION_SECRET: secret });
    await a.waitReady();
    expect(a.lines('"migrations applied"').length + b.lines('"migrations applied"').length).to.equal(1);
  });
});
