import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '@svc/http-kit';
import { GiveUp, RetryLater } from '@svc/jobs';
import { FakeApns, FakeFcm } from '@svc/test-support';
import { expect } from 'chai';
import { ApnsProvider, FcmProvider, FilePushProvider, type PushMessage, retryAfterMs } from '../src/providers/index.js';

const HOUSEHOLD = '6f1c2a52-7f0e-4a53-9d7c-2f3e1b9c8a01';
const message = (over: Partial<PushMessage> = {}): PushMessage => ({
  id: '0b9d6f7e-1111-4c2a-8e55-3a2f1c0d9e88',
  token: 'fcm-token-1',
  platform: 'android',
  kind: 'listChanges',
  householdId: HOUSEHOLD,
  title: 'Shopping list',
  body: 'Ada added milk',
  data: { listId: 'l1', count: 3, nested: { a: 1 } },
  ...over,
});

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('push providers', () => {
  const clock = new ManualClock('2026-11-27T12:00:00.000Z');

  describe('FCM HTTP v1 against the local fake', () => {
    let fcm: FakeFcm;
    let provider: FcmProvider;
    beforeEach(async () => {
      fcm = new FakeFcm();
      await fcm.start();
      provider = new FcmProvider({ projectId: fcm.projectId, credentials: fcm.serviceAccount, url: fcm.url, tokenUrl: fcm.tokenUrl, clock, timeoutMs: 500 });
    });
    afterEach(() => fcm.stop());

    it('sends the notification with string data and a collapse key per household and kind, on a cached access token', async () => {
      expect(await provider.send(message())).to.equal('sent');
      expect(await provider.send(message({ token: 'fcm-token-2' }))).to.equal('sent');
      expect(fcm.tokenRequests).to.equal(1);
      expect(fcm.delivered.map((d) => d.token)).to.deep.equal(['fcm-token-1', 'fcm-token-2']);
      const m = fcm.delivered[0]!.message;
      expect(m.notification).to.deep.equal({ title: 'Shopping list', body: 'Ada added milk' });
      expect(m.data).to.deep.equal({
        listId: 'l1',
        count: '3',
        nested: '{"a":1}',
        notificationId: message().id,
        householdId: HOUSEHOLD,
        kind: 'listChanges',
      });
      expect(m.android).to.deep.include({ collapse_key: `${HOUSEHOLD}:listChanges` });
      expect((m.apns as { headers: Record<string, string> }).headers['apns-collapse-id']).to.equal(`${HOUSEHOLD}:listChanges`);
    });

    it('sends on at most its kept connections, however many sends are in flight, and keeps them for the next', async () => {
      const few = new FcmProvider({ projectId: fcm.projectId, credentials: fcm.serviceAccount, url: fcm.url, tokenUrl: fcm.tokenUrl, clock, connections: 4 });
      try {
        await few.send(message()); // the access token first (its own connection to the token endpoint)
        const before = fcm.connections;
        const sends = Array.from({ length: 40 }, (_, i) => few.send(message({ token: `t-${i}` })));
        expect(await Promise.all(sends)).to.deep.equal(Array(40).fill('sent'));
        expect(fcm.connections - before).to.be.at.most(3); // the one kept from the first send, and 3 more
        await Promise.all(Array.from({ length: 40 }, (_, i) => few.send(message({ token: `u-${i}` }))));
        expect(fcm.connections - before).to.be.at.most(3);
        expect(fcm.delivered).to.have.length(81);
      } finally {
        await few.close();
      }
    });

    it('renews the access token before it expires', async () => {
      // Tokens that live 60 s are within the library's five-minute renewal margin: each send gets a new one.
      fcm.tokenLifetimeSeconds = 60;
      await provider.send(message());
      await provider.send(message());
      expect(fcm.tokenRequests).to.equal(2);
      expect(new Set(fcm.delivered.map((d) => d.authorization)).size).to.equal(2);
    });

    it('calls UNREGISTERED and 404 gone', async () => {
      fcm.unregister('dead');
      expect(await provider.send(message({ token: 'dead' }))).to.equal('gone');
      fcm.script.push({ status: 404, body: { error: { code: 404, status: 'NOT_FOUND' } } });
      expect(await provider.send(message())).to.equal('gone');
    });

    it('retries 429 and 5xx, honouring Retry-After, and gives a 400 up', async () => {
      fcm.script.push({ status: 429, headers: { 'Retry-After': '37' }, body: { error: { status: 'RESOURCE_EXHAUSTED' } } });
      const e429 = await rejection(provider.send(message()));
      expect(e429).to.be.instanceOf(RetryLater);
      expect((e429 as RetryLater).retryAfterMs).to.equal(37_000);
      fcm.script.push({ status: 503 });
      const e503 = await rejection(provider.send(message()));
      expect(e503).to.be.instanceOf(RetryLater);
      expect((e503 as RetryLater).retryAfterMs).to.equal(undefined);
      fcm.script.push({ status: 400, body: { error: { status: 'INVALID_ARGUMENT' } } });
      expect(await rejection(provider.send(message()))).to.be.instanceOf(GiveUp);
      expect(fcm.delivered).to.have.length(0);
    });

    it('retries a send that does not answer in time', async () => {
      fcm.script.push({ status: 200, hang: true });
      const err = await rejection(provider.send(message()));
      expect(err).to.be.instanceOf(RetryLater);
      expect(err.message).to.match(/timed out/);
    });

    it('on 401 drops its access token and gets a new one for the next send', async () => {
      await provider.send(message());
      fcm.script.push({ status: 401 });
      expect(await rejection(provider.send(message()))).to.be.instanceOf(RetryLater);
      await provider.send(message());
      expect(fcm.tokenRequests).to.equal(2);
    });

    it('is refused by the fake with a wrong key (the assertion is checked)', async () => {
      const other = new FakeFcm();
      const wrong = new FcmProvider({ projectId: fcm.projectId, credentials: other.serviceAccount, url: fcm.url, tokenUrl: fcm.tokenUrl, clock });
      expect(await rejection(wrong.send(message()))).to.be.instanceOf(RetryLater);
      expect(fcm.delivered).to.have.length(0);
    });
  });

  describe('APNs over HTTP/2 against the local fake (TLS with a test certificate)', () => {
    let apns: FakeApns;
    let provider: ApnsProvider;
    beforeEach(async () => {
      apns = new FakeApns();
      apns.now = () => clock.now().getTime();
      await apns.start();
      clock.set('2026-11-27T12:00:00.000Z');
      provider = new ApnsProvider({
        keyId: apns.keyId,
        teamId: apns.teamId,
        key: apns.p8,
        topic: 'no.example.mealplanner',
        url: apns.url,
        clock,
        ca: apns.ca,
        timeoutMs: 500,
      });
    });
    afterEach(async () => {
      await provider.close();
      await apns.stop();
    });

    it('sends alerts over one kept HTTP/2 connection with collapse and thread ids per household and kind', async () => {
      for (const token of ['a1', 'b2', 'c3']) expect(await provider.send(message({ token, platform: 'ios', kind: 'householdNews' }))).to.equal('sent');
      expect(apns.connections).to.equal(1);
      const d = apns.delivered[0]!;
      expect(d.headers['apns-topic']).to.equal('no.example.mealplanner');
      expect(d.headers['apns-push-type']).to.equal('alert');
      expect(d.headers['apns-collapse-id']).to.equal(`${HOUSEHOLD}:householdNews`);
      expect(d.payload.aps).to.deep.equal({
        alert: { title: 'Shopping list', body: 'Ada added milk' },
        'thread-id': `${HOUSEHOLD}:householdNews`,
        sound: 'default',
      });
      expect(d.payload.data).to.deep.equal(message().data);
    });

    it('renews its ES256 provider token before an hour has passed', async () => {
      await provider.send(message({ platform: 'ios' }));
      clock.advance(49 * 60_000);
      await provider.send(message({ platform: 'ios' }));
      expect(apns.providerTokens.size).to.equal(1);
      clock.advance(2 * 60_000); // 51 minutes after the first
      await provider.send(message({ platform: 'ios' }));
      expect(apns.providerTokens.size).to.equal(2);
      expect(apns.delivered).to.have.length(3);
    });

    it('calls 410 and BadDeviceToken gone', async () => {
      apns.unregister('gone1');
      expect(await provider.send(message({ token: 'gone1' }))).to.equal('gone');
      apns.script.push({ status: 400, body: { reason: 'BadDeviceToken' } });
      expect(await provider.send(message())).to.equal('gone');
    });

    it('retries 429 and 5xx honouring Retry-After, retries a time-out, gives other refusals up', async () => {
      apns.script.push({ status: 429, headers: { 'retry-after': '5' }, body: { reason: 'TooManyRequests' } });
      const e429 = await rejection(provider.send(message()));
      expect(e429).to.be.instanceOf(RetryLater);
      expect((e429 as RetryLater).retryAfterMs).to.equal(5000);
      apns.script.push({ status: 503, body: { reason: 'ServiceUnavailable' } });
      expect(await rejection(provider.send(message()))).to.be.instanceOf(RetryLater);
      apns.script.push({ status: 200, hang: true });
      const slow = await rejection(provider.send(message()));
      expect(slow).to.be.instanceOf(RetryLater);
      expect(slow.message).to.match(/timed out/);
      apns.script.push({ status: 400, body: { reason: 'PayloadTooLarge' } });
      expect(await rejection(provider.send(message()))).to.be.instanceOf(GiveUp);
      // The same connection carried all of them, the time-out included.
      expect(await provider.send(message())).to.equal('sent');
      expect(apns.connections).to.equal(1);
    });

    it('reconnects at the next send after the connection is gone', async () => {
      await provider.send(message());
      const port = Number(new URL(apns.url).port);
      await apns.stop(); // closes the session from the server's side
      await apns.start(port);
      expect(await provider.send(message())).to.equal('sent');
      expect(apns.connections).to.equal(2);
      expect(apns.delivered).to.have.length(2);
    });
  });

  describe('the file provider (no provider configured)', () => {
    it('writes each message as a JSON file and logs one line without the token', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'push-files-'));
      const lines: { obj: Record<string, unknown>; msg?: string }[] = [];
      const provider = new FilePushProvider('fcm', {
        dir,
        clock,
        logger: { info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }), warn() {} },
      });
      expect(await provider.send(message())).to.equal('sent');
      const files = fs.readdirSync(dir);
      expect(files).to.have.length(1);
      const content = JSON.parse(fs.readFileSync(path.join(dir, files[0]!), 'utf8'));
      expect(content).to.include({ provider: 'fcm', token: 'fcm-token-1', title: 'Shopping list', collapseId: `${HOUSEHOLD}:listChanges` });
      expect(JSON.stringify(lines)).to.not.include('fcm-token-1');
      fs.rmSync(dir, { recursive: true, force: true });
    });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('120', clock.now())).to.equal(120_000);
    expect(retryAfterMs(new Date(clock.now().getTime() + 30_000).toUTCString(), clock.now())).to.equal(30_000);
    expect(retryAfterMs('soon', clock.now())).to.equal(undefined);
    expect(retryAfterMs(null, clock.now())).to.equal(undefined);
  });
});
