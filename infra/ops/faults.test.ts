/**
 * The fault suite (`npm run test:ops`): three instances of the built service behind nginx (the
 * repository's template, Debian's nginx), each with DATABASE_URL, REDIS_URL and SMTP_URL pointing
 * at a TCP proxy this suite controls, so PostgreSQL, Redis and SMTP can be taken away and brought
 * back without touching the machine's shared servers. Cases run in order on one cluster.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createKnex } from '@svc/db';
import { adminDatabaseUrl, connectTestRedis, linksIn, SmtpReceiver, testRedisUrl } from '@svc/test-support';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { GOOGLE_CLIENT, TestIdp } from '../../packages/accounts/test/idp.js';
import { Client, findOrInstall, freePort, Instance, metricValue, Nginx, type Outcome, requirePart, summary, until } from './cluster.js';
import { TcpProxy } from './tcp-proxy.js';
import { awaitRecovery, expectWritesOnce as checkWritesOnce, eventsLoad } from './workload.js';

const AUTH_RATE_LIMIT = 40;
const LOCKOUT_MAX_FAILURES = 3;
const PASSWORD = 'correct horse battery';
const APP_URI = 'com.example.meals:/oauth/callback';

interface User {
  client: Client;
  email: string;
  householdId: string;
}

describe('ops: three instances behind nginx, faults of PostgreSQL, Redis, SMTP and the instances themselves', function () {
  this.timeout(180_000);
  let admin: Knex;
  let db: Knex;
  let dbName: string;
  let pg: TcpProxy;
  let redis: TcpProxy;
  const smtp = new SmtpReceiver();
  // Google as the instances see it (a local stand-in), for the app sign-in code.
  const idp = new TestIdp();
  let smtpProxy: TcpProxy;
  let nginx: Nginx;
  const instances: Instance[] = [];
  const users: User[] = [];
  const sessionSecret = randomBytes(48).toString('base64url');

  before(async function () {
    const nginxBin = requirePart(this, findOrInstall('nginx', 'nginx'));
    // The machine's PostgreSQL (TEST_DATABASE_URL; without it, an embedded one) and Redis.
    const adminUrl = await adminDatabaseUrl();
    const probe = await connectTestRedis();
    if (!probe) requirePart(this, { why: `Redis does not answer at ${testRedisUrl()}` });
    probe?.disconnect();
    const redisUrl = new URL(testRedisUrl());
    pg = new TcpProxy(Number(new URL(adminUrl).port || 5432), new URL(adminUrl).hostname);
    redis = new TcpProxy(Number(redisUrl.port || 6379), redisUrl.hostname);
    admin = createKnex(adminUrl, { poolMax: 1 });
    dbName = `ops_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    await admin.raw(`create database "${dbName}"`);
    const dbUrl = new URL(adminUrl);
    dbUrl.pathname = `/${dbName}`;
    db = createKnex(dbUrl.toString(), { poolMax: 2 });
    await smtp.start();
    await idp.start();
    idp.clock = { now: () => new Date() };
    smtpProxy = new TcpProxy(smtp.port);
    await Promise.all([pg.start(), redis.start(), smtpProxy.start()]);
    const ports = await Promise.all([0, 1, 2].map(async () => [await freePort(), await freePort()] as const));
    const proxied = new URL(dbUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(pg.port);
    nginx = new Nginx(
      nginxBin,
      ports.map(([p]) => `127.0.0.1:${p}`),
    );
    const env = () => ({
      DATABASE_URL: proxied.toString(),
      // A Redis database of its own (11), so this suite's counters never meet other tests' keys.
      REDIS_URL: `redis://127.0.0.1:${redis.port}/11`,
      SMTP_URL: `smtp://127.0.0.1:${smtpProxy.port}`,
      SESSION_SECRET: sessionSecret,
      TRUST_PROXY: 'loopback',
      PUBLIC_BASE_URL: `http://localhost:${nginx.port}`,
      PASSWORD_BREACH_API: 'off',
      // Longer than nginx's upstream keepalive_timeout (5 s), as in compose and the manifests (10).
      SHUTDOWN_DRAIN_SECONDS: '6',
      SHUTDOWN_TIMEOUT_SECONDS: '10',
      DB_STATEMENT_TIMEOUT_MS: '2000',
      AUTH_RATE_LIMIT: String(AUTH_RATE_LIMIT),
      LOCKOUT_MAX_FAILURES: String(LOCKOUT_MAX_FAILURES),
      PASSWORD_HASH_WORKERS: '1',
      LOG_LEVEL: 'info',
      GOOGLE_CLIENT_ID: GOOGLE_CLIENT.id,
      GOOGLE_CLIENT_SECRET: GOOGLE_CLIENT.secret,
      GOOGLE_AUTHORIZATION_URL: idp.url('/google/authorize'),
      GOOGLE_TOKEN_URL: idp.url('/google/token'),
      GOOGLE_USERINFO_URL: idp.url('/google/userinfo'),
      APP_REDIRECT_URIS: APP_URI,
    });
    for (const [i, [port, metricsPort]] of ports.entries()) instances.push(new Instance(`ops-${i + 1}`, port, metricsPort, env));
    await nginx.start();
  });

  after(async () => {
    await Promise.all(instances.map((i) => i.stop('SIGKILL')));
    await nginx?.stop();
    await Promise.all([pg?.stop(), redis?.stop(), smtpProxy?.stop(), smtp.stop(), idp.stop()]);
    await db?.destroy();
    // OPS_KEEP_DATABASE=1 keeps it for a look after a failure.
    if (dbName && process.env.OPS_KEEP_DATABASE !== '1') await admin.raw(`drop database if exists "${dbName}" with (force)`);
    else if (dbName) console.log(`      kept database ${dbName}`);
    await admin?.destroy();
  });

  /** Every acknowledged write (201) is in the database exactly once; no write is there twice. */
  const expectWritesOnce = (outcomes: Outcome[]) => checkWritesOnce(db, outcomes);
  /** Load through nginx: a signed-in user's events read and written, half and half. */
  const load = (phase: string, concurrency = 6) => eventsLoad(users, `ops-${phase}`, concurrency);

  async function signUp(email: string, at: Instance): Promise<Client> {
    const c = new Client(at.url);
    const res = await c.call('POST', '/api/v1/auth/register', { email, password: PASSWORD, displayName: 'Ops' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return c;
  }

  it('three instances started at once on an empty database: migrations run once, all become ready', async () => {
    for (const i of instances) i.start();
    await Promise.all(instances.map((i) => i.waitReady()));
    const applied = instances.flatMap((i) => i.lines('"migrations applied"'));
    expect(applied, 'one instance applies the migrations').to.have.length(1);
    const history: { n: number; distinct: number }[] = (
      await db.raw('select count(*)::int as n, count(distinct name)::int as distinct from knex_migrations_accounts')
    ).rows;
    expect(history[0]!.n).to.equal(history[0]!.distinct);
    expect(history[0]!.n).to.be.greaterThan(0);
    // Users for the load: each with a household, signed in through nginx.
    for (let k = 0; k < 3; k++) {
      const c = await signUp(`load-${k}@example.com`, instances[k]!);
      c.base = nginx.url;
      c.fresh = true;
      const h = await c.call('POST', '/api/v1/households', { name: `Load ${k}`, timeZoneId: 'Europe/Oslo', defaultDinnerTime: '18:00' });
      expect(h.status, JSON.stringify(h.body)).to.equal(201);
      users.push({ client: c, email: `load-${k}@example.com`, householdId: h.body.id });
    }
    // Every instance runs on the Node the repository installs (24, tools/node-runtime), as this suite does.
    expect(Number(process.versions.node.split('.')[0])).to.equal(24);
    for (const i of instances)
      expect(
        i.lines('"msg":"ready at ').map((l) => l.node),
        i.name,
      ).to.deep.equal([process.versions.node]);
  });

  it('sessions, security stamps, single-use tokens, lockouts and the auth rate limit are shared by the instances', async () => {
    const [a, b, c] = instances as [Instance, Instance, Instance];
    // A session made on one instance works on every other.
    const first = await signUp('shared@example.com', a);
    for (const i of instances) expect((await first.call('GET', '/api/v1/me', undefined, i.url)).status).to.equal(200);
    // A second session, then a password change on a third instance: the other session is refused everywhere.
    const second = new Client(b.url);
    expect((await second.call('POST', '/api/v1/auth/login', { email: 'shared@example.com', password: PASSWORD })).status).to.equal(200);
    const changed = await first.call('POST', '/api/v1/me/password', { currentPassword: PASSWORD, newPassword: 'another horse battery' }, c.url);
    expect(changed.status, JSON.stringify(changed.body)).to.equal(204);
    for (const i of instances) {
      expect((await second.call('GET', '/api/v1/me', undefined, i.url)).status).to.equal(401);
      expect((await first.call('GET', '/api/v1/me', undefined, i.url)).status).to.equal(200);
    }
    // A reset token is single use across instances: the same token sent to all three at once.
    smtp.clear();
    expect((await first.call('POST', '/api/v1/auth/forgot-password', { email: 'shared@example.com' }, a.url)).status).to.equal(204);
    const mail = await smtp.waitFor((m) => m.to.includes('shared@example.com') && m.text.includes('/reset-password?'), 30_000);
    const link = linksIn(mail.text).find((u) => u.pathname === '/reset-password')!;
    const token = link.searchParams.get('token')!;
    const resets = await Promise.all(
      instances.map((i) =>
        new Client(i.url).call('POST', '/api/v1/auth/reset-password', { email: 'shared@example.com', token, newPassword: `reset horse ${i.name}` }),
      ),
    );
    expect(resets.map((r) => r.status).sort()).to.deep.equal([204, 400, 400]);
    // Wrong passwords spread over the instances lock the account on all of them.
    const lockee = await signUp('lockee@example.com', b);
    const attempts: number[] = [];
    for (let k = 0; k < LOCKOUT_MAX_FAILURES; k++) {
      attempts.push(
        (await lockee.call('POST', '/api/v1/auth/login', { email: 'lockee@example.com', password: 'wrong wrong wrong' }, instances[k % 3]!.url)).status,
      );
    }
    expect(attempts.slice(0, LOCKOUT_MAX_FAILURES - 1)).to.deep.equal(Array(LOCKOUT_MAX_FAILURES - 1).fill(401));
    for (const i of instances)
      expect((await lockee.call('POST', '/api/v1/auth/login', { email: 'lockee@example.com', password: PASSWORD }, i.url)).status).to.equal(423);
    // One auth budget per client address across the instances (Redis): of 60 parallel requests spread over three instances, exactly the ceiling passes.
    const client = new Client(a.url);
    const answers = await Promise.all(
      Array.from({ length: AUTH_RATE_LIMIT + 20 }, (_, k) => client.call('GET', '/api/v1/auth/providers', undefined, instances[k % 3]!.url)),
    );
    expect(answers.filter((r) => r.status === 200)).to.have.length(AUTH_RATE_LIMIT);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).to.have.length(20);
    for (const r of refused) expect(Number(r.headers.get('retry-after'))).to.be.greaterThan(0);
  });

  it('an app sign-in code made through three instances (challenge, callback, hand-over) is spent once when all three exchange it at once; a replay revokes its session on every instance', async () => {
    const [a, b, c] = instances as [Instance, Instance, Instance];
    idp.user = { sub: 'g-ops-1', email: 'app-user@example.test', email_verified: true, name: 'App User' };
    const verifier = 'v'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const onService = (href: string) => {
      const u = new URL(href, 'http://service');
      return `${u.pathname}${u.search}`;
    };
    /** Challenge on a, provider callback on b, hand-over on c: the code the app receives. */
    const appCode = async () => {
      const browser = new Client(a.url);
      const start = await browser.call('GET', `/api/v1/auth/challenge/google?redirectUri=${encodeURIComponent(APP_URI)}&codeChallenge=${challenge}`);
      expect(start.status, JSON.stringify(start.body)).to.equal(302);
      const atIdp = await fetch(start.headers.get('location')!, { redirect: 'manual' });
      const callback = await browser.call('GET', onService(atIdp.headers.get('location')!), undefined, b.url);
      expect(callback.status, JSON.stringify(callback.body)).to.equal(302);
      const done = await browser.call('GET', onService(callback.headers.get('location')!), undefined, c.url);
      expect(done.headers.get('location')!.startsWith(`${APP_URI}?code=`), String(done.headers.get('location'))).to.equal(true);
      return new URL(done.headers.get('location')!).searchParams.get('code')!;
    };

    // All three instances exchange one code at once: exactly one signs in.
    const code = await appCode();
    const apps = instances.map((i) => new Client(i.url));
    const exchanged = await Promise.all(apps.map((app) => app.call('POST', '/api/v1/auth/exchange', { code, codeVerifier: verifier })));
    expect(exchanged.map((r) => r.status).sort()).to.deep.equal([200, 401, 401]);
    expect(exchanged.filter((r) => r.status === 401).map((r) => r.body.code)).to.deep.equal(['signin_code_spent', 'signin_code_spent']);

    // A code exchanged once: its session works on every instance; replayed on another instance,
    // the replay is refused and the session ends everywhere (RFC 6749 §4.1.2).
    const second = await appCode();
    const app = new Client(a.url);
    expect((await app.call('POST', '/api/v1/auth/exchange', { code: second, codeVerifier: verifier })).status).to.equal(200);
    for (const i of instances) expect((await app.call('GET', '/api/v1/me', undefined, i.url)).body.user.email).to.equal('app-user@example.test');
    const replay = await new Client(c.url).call('POST', '/api/v1/auth/exchange', { code: second, codeVerifier: verifier });
    expect([replay.status, replay.body.code]).to.deep.equal([401, 'signin_code_spent']);
    for (const i of instances) expect((await app.call('GET', '/api/v1/me', undefined, i.url)).status).to.equal(401);
  });

  it('rolling restart under read and write load (each in turn: out of nginx, SIGTERM, start again, back in): zero failed requests', async () => {
    const l = load('rolling');
    const events: { at: number; what: string }[] = [];
    l.start();
    try {
      await l.more(30);
      for (const i of instances) {
        // nginx's upstreams are static: it learns nothing from the drain by itself (no active health
        // checks in open-source nginx), so the instance leaves the rotation first, as Kubernetes
        // takes a terminating pod out of the endpoints. The drain covers what is still on its way.
        const upstream = `127.0.0.1:${i.port}`;
        await nginx.reload([upstream]);
        events.push({ at: Date.now(), what: `out of nginx ${i.name}` });
        const t = Date.now();
        events.push({ at: t, what: `SIGTERM ${i.name}` });
        expect(await i.stop('SIGTERM'), i.tail()).to.equal(0);
        events.push({ at: Date.now(), what: `exited ${i.name}` });
        expect(i.lines('"msg":"draining"').length).to.be.greaterThan(0);
        i.start();
        await i.waitReady();
        events.push({ at: Date.now(), what: `ready ${i.name}` });
        await nginx.reload([]);
        events.push({ at: Date.now(), what: `back in nginx ${i.name}` });
        // The restarted instance takes its share again before the next one goes.
        await until(
          `${i.name} serving load again`,
          () => i.lines('"route":"POST /api/v1/households/{householdId}/events"').some((x) => Date.parse(String(x.time)) > t),
          30_000,
        );
        await l.more(30);
      }
    } finally {
      await l.stop();
    }
    const outcomes = l.outcomes;
    const failed = outcomes.filter((o) => !(o.status === 200 || o.status === 201));
    if (failed.length) {
      // When it fails: what happened around each failure, and what nginx said.
      const t0 = events[0]!.at;
      console.log(JSON.stringify({ events: events.map((e) => `${e.at - t0} ${e.what}`), failed: failed.map((f) => `${f.at - t0} ${f.kind} ${f.status}`) }));
      console.log(nginx.stderr.split('\n').slice(-10).join('\n'));
    }
    expect(failed, summary(outcomes)).to.deep.equal([]);
    const writes = await expectWritesOnce(outcomes);
    expect(writes).to.be.greaterThan(50);
    console.log(`      rolling restart: ${outcomes.length} requests, ${writes} writes, 0 failed`);
  });

  it('SIGKILL of an instance under load: every read answered, a write is answered or reported failed (never lost once acknowledged), the instance comes back', async () => {
    const l = load('sigkill');
    l.start();
    const victim = instances[1]!;
    try {
      await l.more(30);
      await victim.stop('SIGKILL');
      await l.more(60);
      victim.start();
      await victim.waitReady();
      await l.more(30);
    } finally {
      await l.stop();
    }
    const outcomes = l.outcomes;
    // nginx retries a GET on another instance; a POST already sent is not retried (it may have been applied) and gets nginx's 503 problem.
    expect(
      outcomes.filter((o) => o.kind === 'read' && o.status !== 200),
      summary(outcomes),
    ).to.deep.equal([]);
    const badWrites = outcomes.filter((o) => o.kind === 'write' && o.status !== 201 && !(o.status === 503 && !o.fromService));
    expect(badWrites, summary(outcomes)).to.deep.equal([]);
    await expectWritesOnce(outcomes);
    console.log(`      SIGKILL: ${summary(outcomes)}`);
  });

  for (const fault of ['refused', 'hung'] as const) {
    it(`PostgreSQL ${fault === 'refused' ? 'down (connections refused)' : 'hung (connections stall)'} for a while: 503 with Retry-After, /readyz 503, recovery without a restart, every acknowledged write stored exactly once`, async () => {
      const starts = instances.map((i) => i.starts);
      const l = load(`pg-${fault}`);
      l.start();
      let down = 0;
      let up = 0;
      try {
        await l.more(30);
        down = Date.now();
        if (fault === 'refused') await pg.cut();
        else pg.freeze();
        await until(
          '503 answers from the service while PostgreSQL is away',
          () => l.since(down).filter((o) => o.status === 503 && o.fromService).length >= 10,
          60_000,
          () => summary(l.since(down)),
        );
        // Readiness answers, and says not ready, within its bound even while the server hangs.
        for (const i of instances) expect((await fetch(`${i.url}/readyz`)).status).to.equal(503);
        // The 503s are counted by route and status (on whichever instances answered them).
        const counted = await Promise.all(
          instances.map(async (i) =>
            (await i.metrics())
              .split('\n')
              .filter((l) => l.startsWith('http_request_duration_seconds_count{') && l.includes('status="503"'))
              .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0),
          ),
        );
        expect(counted.reduce((a, b) => a + b, 0)).to.be.greaterThan(0);
        up = Date.now();
        await pg.restore();
        await awaitRecovery(l, up, 'PostgreSQL is back');
      } finally {
        if (pg.state !== 'open') await pg.restore();
        await l.stop();
      }
      const outcomes = l.outcomes;
      const unexpected = outcomes.filter(
        (o) => !(o.status === 200 || o.status === 201 || (o.status === 503 && o.fromService && o.code === 'service_unavailable' && o.retryAfter)),
      );
      expect(unexpected, summary(outcomes)).to.deep.equal([]);
      expect(
        instances.map((i) => i.starts),
        'no instance restarted',
      ).to.deep.equal(starts);
      for (const i of instances) expect(i.child!.exitCode).to.equal(null);
      for (const i of instances) expect((await fetch(`${i.url}/readyz`)).status).to.equal(200);
      const writes = await expectWritesOnce(outcomes);
      console.log(`      PostgreSQL ${fault}: ${summary(outcomes)}; ${writes} acknowledged writes stored once`);
    });
  }

  it('Redis hung, then down: sign-ins go on under a per-instance in-memory limit with one warning per instance each time; back, the limit is shared again', async () => {
    const warned = () => instances.map((i) => i.lines('redis unavailable').length);
    const back = () => instances.map((i) => i.lines('redis back').length);
    // Hung: commands time out (500 ms) and sign-ins go on under the in-memory limit; the first
    // command sent to the hung Redis ends its connection (nothing received in 1 s): one warning.
    redis.freeze();
    const during = new Client(instances[0]!.url);
    const logins = await Promise.all(instances.map((i) => during.call('POST', '/api/v1/auth/login', { email: users[0]!.email, password: PASSWORD }, i.url)));
    expect(logins.map((r) => r.status)).to.deep.equal([200, 200, 200]);
    await until(
      'a warning from every instance (hung)',
      () => warned().every((n) => n === 1),
      30_000,
      () => instances.map((i) => i.tail(3)).join('\n'),
    );
    await redis.restore();
    await until('every instance back on Redis (after the hang)', () => back().every((n) => n === 1), 30_000);
    // Down: connections refused.
    await redis.cut();
    await until(
      'a warning from every instance (down)',
      () => warned().every((n) => n === 2),
      30_000,
      () => instances.map((i) => i.tail(3)).join('\n'),
    );
    const ip = new Client(instances[0]!.url);
    const login = await ip.call('POST', '/api/v1/auth/login', { email: users[0]!.email, password: PASSWORD });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    // Per instance now: each one lets the whole ceiling through for the same client.
    for (const i of instances) {
      const answers = await Promise.all(Array.from({ length: AUTH_RATE_LIMIT + 5 }, () => ip.call('GET', '/api/v1/auth/providers', undefined, i.url)));
      const ok = answers.filter((r) => r.status === 200).length;
      expect(
        answers.filter((r) => r.status !== 200 && r.status !== 429),
        'no other answer',
      ).to.deep.equal([]);
      expect(ok).to.equal(i === instances[0] ? AUTH_RATE_LIMIT - 1 : AUTH_RATE_LIMIT);
    }
    expect(warned(), 'still one warning each for this outage').to.deep.equal([2, 2, 2]);
    await redis.restore();
    await until('every instance back on Redis', () => back().every((n) => n === 2), 30_000);
    const fresh = new Client(instances[0]!.url);
    const answers = await Promise.all(
      Array.from({ length: AUTH_RATE_LIMIT + 10 }, (_, k) => fresh.call('GET', '/api/v1/auth/providers', undefined, instances[k % 3]!.url)),
    );
    expect(answers.filter((r) => r.status === 200)).to.have.length(AUTH_RATE_LIMIT);
  });

  it("SMTP down: mail waits in the outbox (its queue's depth in the metrics), is retried with backoff and delivered exactly once when SMTP is back, three instances running the queue", async () => {
    await smtpProxy.cut();
    smtp.clear();
    const emails = ['mail-1@example.com', 'mail-2@example.com', 'mail-3@example.com', 'mail-4@example.com'];
    await Promise.all(emails.map((e, k) => signUp(e, instances[k % 3]!)));
    // Every mail tried once and failed (the proxy refuses), and scheduled for a later attempt.
    const rows = () => db('mail_outbox').whereIn('recipient', emails).select('recipient', 'attempts', 'sentAt', 'createdAt', 'nextAttemptAt', 'lastError');
    // An attempt is counted when a runner takes its job, and its failure recorded (lastError,
    // the next time, a log line) once the send has failed: wait for the failure, not the claim.
    await until(
      'a failed attempt for every mail',
      async () =>
        (await rows()).every((r) => r.attempts >= 1 && r.sentAt === null && r.lastError !== null) &&
        instances.flatMap((i) => i.lines('delivery failed; will retry')).length >= emails.length,
      60_000,
    );
    for (const r of await rows()) {
      expect(r.lastError).to.be.a('string');
      expect(new Date(r.nextAttemptAt).getTime() - new Date(r.createdAt).getTime()).to.be.at.least(29_000);
    }
    expect(instances.flatMap((i) => i.lines('delivery failed; will retry')).length).to.be.at.least(emails.length);
    const scraped = await instances[2]!.metrics();
    expect(metricValue(scraped, 'jobs_queued{queue="accounts-mail",instance="ops-3"}')).to.be.at.least(emails.length);
    expect(metricValue(scraped, 'jobs_oldest_unfinished_age_seconds{queue="accounts-mail",instance="ops-3"}')).to.be.greaterThan(0);
    await smtpProxy.restore();
    // The first retry is due 30 s after the failure; every instance's job runner looks every second.
    await until('every mail sent', async () => (await rows()).every((r) => r.sentAt !== null), 120_000);
    for (const e of emails)
      expect(
        smtp.mails.filter((m) => m.to.includes(e)),
        e,
      ).to.have.length(1);
    expect(metricValue(await instances[0]!.metrics(), 'jobs_queued{queue="accounts-mail",instance="ops-1"}')).to.equal(0);
  });
});
