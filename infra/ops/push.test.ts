/**
 * Push faults (`npm run test:ops`, issue 32): two instances of the built service with FCM pointed at
 * the local FCM fake, on a database of their own. FCM answering 503 with Retry-After, then
 * recovering: every phone gets the notification once, not before the Retry-After. An instance
 * killed (SIGKILL) while its deliveries hang at FCM: the other instance finishes them after the
 * queue's expiry, and nothing is lost.
 */

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKnex } from '@svc/db';
import { adminDatabaseUrl, FakeFcm } from '@svc/test-support';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { Client, freePort, Instance, until } from './cluster.js';

const TOKEN = 'ops-planner-token';
const PHONES = ['ops-phone-1', 'ops-phone-2', 'ops-phone-3', 'ops-phone-4'];

describe('ops: push delivery when FCM fails and when an instance dies mid-delivery', function () {
  this.timeout(300_000);
  let admin: Knex;
  let dbName: string;
  let keys: string;
  const fcm = new FakeFcm();
  const instances: Instance[] = [];
  let householdId: string;

  before(async () => {
    const adminUrl = await adminDatabaseUrl();
    admin = createKnex(adminUrl, { poolMax: 1 });
    dbName = `ops_push_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    await admin.raw(`create database "${dbName}"`);
    const dbUrl = new URL(adminUrl);
    dbUrl.pathname = `/${dbName}`;
    await fcm.start();
    keys = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-push-'));
    fs.writeFileSync(path.join(keys, 'fcm.json'), JSON.stringify(fcm.serviceAccount));
    const env = () => ({
      DATABASE_URL: dbUrl.toString(),
      SESSION_SECRET: randomBytes(48).toString('base64url'),
      PUBLIC_BASE_URL: 'http://localhost:8080',
      PASSWORD_BREACH_API: 'off',
      PASSWORD_HASH_WORKERS: '1',
      SHUTDOWN_DRAIN_SECONDS: '0',
      DATA_DIR: path.join(keys, 'data'),
      LOG_LEVEL: 'info',
      FCM_PROJECT_ID: fcm.projectId,
      FCM_CREDENTIALS: path.join(keys, 'fcm.json'),
      FCM_URL: fcm.url,
      FCM_TOKEN_URL: fcm.tokenUrl,
      INTERNAL_API_TOKENS: TOKEN,
    });
    const secretEnv = env();
    for (const k of [1, 2]) instances.push(new Instance(`push-${k}`, await freePort(), await freePort(), () => secretEnv));
    instances[0]!.start();
    await instances[0]!.waitReady();
    instances[1]!.start();
    await instances[1]!.waitReady();
    const c = new Client(instances[0]!.url);
    const reg = await c.call('POST', '/api/v1/auth/register', { email: 'push-ops@example.com', password: 'correct horse battery', displayName: 'Ops' });
    expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
    const h = await c.call('POST', '/api/v1/households', { name: 'Ops home', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00' });
    expect(h.status, JSON.stringify(h.body)).to.equal(201);
    householdId = h.body.id;
    for (const token of PHONES) expect((await c.call('PUT', '/api/v1/me/devices', { token, platform: 'android', provider: 'fcm' })).status).to.equal(200);
  });

  after(async () => {
    await Promise.all(instances.map((i) => i.stop('SIGKILL')));
    await fcm.stop();
    if (dbName) await admin.raw(`drop database if exists "${dbName}" with (force)`);
    await admin?.destroy();
    if (keys) fs.rmSync(keys, { recursive: true, force: true });
  });

  const notify = async (at: Instance, title: string) => {
    const res = await fetch(`${at.url}/internal/v1/households/${householdId}/notifications`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'runDone', title, body: 'ops' }),
    });
    expect(res.status).to.equal(202);
    return ((await res.json()) as { id: string }).id;
  };
  /** Deliveries of one notification, per phone. */
  const deliveredOf = (id: string) => {
    const per = new Map<string, number>();
    for (const d of fcm.delivered) if ((d.message.data as Record<string, string>).notificationId === id) per.set(d.token, (per.get(d.token) ?? 0) + 1);
    return per;
  };

  it('FCM answers 503 with Retry-After: retried no sooner, then each phone gets it once when FCM recovers', async () => {
    const sendsBefore = fcm.sends;
    for (const _ of PHONES) fcm.script.push({ status: 503, headers: { 'Retry-After': '4' } });
    const sentAt = Date.now();
    const id = await notify(instances[0]!, 'After the outage');
    await until(
      'every phone delivered',
      () => deliveredOf(id).size === PHONES.length,
      90_000,
      () => JSON.stringify([...deliveredOf(id)]),
    );
    const firstAt = Date.now();
    const per = deliveredOf(id);
    expect([...per.keys()].sort()).to.deep.equal([...PHONES].sort());
    expect([...per.values()].every((n) => n === 1)).to.equal(true);
    expect(firstAt - sentAt, 'not before Retry-After').to.be.at.least(4000);
    // Each phone was tried twice: the 503 and the delivery.
    expect(fcm.sends - sendsBefore).to.equal(2 * PHONES.length);
  });

  it('an instance killed while its deliveries hang at FCM: the other finishes them after the queue expiry, none lost', async () => {
    const [a, b] = instances as [Instance, Instance];
    // Only A runs jobs while the notification goes out and FCM hangs on every send.
    await b.stop('SIGTERM');
    const sendsBefore = fcm.sends;
    for (const _ of PHONES) fcm.script.push({ status: 0, hang: true });
    const id = await notify(a, 'Mid-delivery');
    await until('A has every delivery in flight at FCM', () => fcm.sends - sendsBefore >= PHONES.length, 30_000);
    await a.stop('SIGKILL');
    b.start();
    await b.waitReady();
    // The queue's expiry (120 s) puts A's active jobs back at B's next maintenance; B delivers them.
    await until(
      'every phone delivered after the kill',
      () => deliveredOf(id).size === PHONES.length,
      240_000,
      () => JSON.stringify([...deliveredOf(id)]),
    );
    const per = deliveredOf(id);
    expect([...per.keys()].sort()).to.deep.equal([...PHONES].sort());
    expect(
      [...per.values()].every((n) => n === 1),
      JSON.stringify([...per]),
    ).to.equal(true);
    a.start();
    await a.waitReady();
  });
});
