import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** Every process a test started, and every embedded cluster one of them may have started: killed when the test ends, pass or fail. */
const children: ChildProcess[] = [];
const grouped = new WeakSet<ChildProcess>();
const clusters: string[] = [];

/** The pid of the PostgreSQL running on `clusterDir` (its postmaster.pid), or undefined. */
function postmasterPid(clusterDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/**
 * Resolves once the PostgreSQL `pid` on `clusterDir` has stopped. It is not this process's child
 * (the service started it), so there is no exit event to wait on: its pid is looked at every 20 ms.
 */
async function gone(clusterDir: string, pid: number, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (postmasterPid(clusterDir) === pid) {
    if (performance.now() > deadline) throw new Error(`the embedded PostgreSQL ${pid} still runs after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function killEverything(): void {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    // a child started in a group of its own (as a terminal starts a command): the whole group
    if (grouped.has(child)) process.kill(-child.pid!, 'SIGKILL');
    else child.kill('SIGKILL');
  }
  for (const dir of clusters.splice(0)) {
    const pid = postmasterPid(dir);
    if (pid) process.kill(pid, 'SIGKILL');
  }
}

/**
 * Runs the real entry point as a separate process, compiled as in production (`node
 * dist/src/main.js`): under tsx's loader a signal would reach tsx's own handlers, not only ours.
 */
async function start(env: Record<string, string>, options: { group?: boolean } = {}): Promise<Started> {
  const port = await freePort();
  let out = '';
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    // group: a process group of its own, led by the service, as a shell starts a command at a terminal
    detached: options.group === true,
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      PASSWORD_BREACH_API: 'off',
      SHUTDOWN_DRAIN_SECONDS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (options.group) grouped.add(child);
  children.push(child);
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, port, output: () => out, exited };
}

/** Resolves once the process has written `text` (event-driven: no polling, no sleeping). */
function waitForOutput(s: Started, text: string, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (s.output().includes(text)) {
        cleanup();
        resolve();
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`exited before "${text}": ${s.output()}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no "${text}" in time: ${s.output()}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      s.child.stdout!.off('data', check);
      s.child.stderr!.off('data', check);
      s.child.off('exit', onExit);
    };
    s.child.stdout!.on('data', check);
    s.child.stderr!.on('data', check);
    s.child.on('exit', onExit);
    check();
  });
}

async function waitReady(s: Started): Promise<void> {
  await waitForOutput(s, '"msg":"ready at ');
  const res = await fetch(`http://127.0.0.1:${s.port}/readyz`);
  if (res.status !== 200) throw new Error(`ready line but /readyz ${res.status}: ${s.output()}`);
}

/**
 * A local OTLP/HTTP receiver: every span of every POST to /v1/traces (JSON encoding, as
 * @opentelemetry/exporter-trace-otlp-http sends), with its resource's attributes, and every path
 * anything was sent to.
 */
async function otlpReceiver() {
  const received: { scope: string; traceId: string; name: string; resource: Record<string, unknown> }[] = [];
  const paths: string[] = [];
  const wakers: (() => void)[] = [];
  const http = await import('node:http');
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      paths.push(req.url ?? '');
      if (req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const rs of body.resourceSpans ?? []) {
          const resource = Object.fromEntries(
            (rs.resource?.attributes ?? []).map((a: { key: string; value: Record<string, unknown> }) => [a.key, Object.values(a.value)[0]]),
          );
          for (const ss of rs.scopeSpans ?? [])
            for (const span of ss.spans ?? []) received.push({ scope: ss.scope.name, traceId: span.traceId, name: span.name, resource });
        }
        for (const wake of wakers.splice(0)) wake();
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as import('node:net').AddressInfo).port;
  /** Resolves once spans of `traceId` from every one of `scopes` have arrived. */
  const spansOf = (traceId: string, scopes: string[], timeoutMs = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`spans of ${traceId} in time: ${JSON.stringify(received)}`)), timeoutMs);
      const check = () => {
        const have = new Set(received.filter((r) => r.traceId === traceId).map((r) => r.scope));
        if (scopes.every((x) => have.has(x))) {
          clearTimeout(timer);
          resolve();
        } else wakers.push(check);
      };
      check();
    });
  return { received, paths, port, spansOf, close: () => server.close() };
}

describe('the service process', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  before(async () => {
    // the packages' dist is built before any test runs (turbo: test dependsOn ^build); this one's now
    execFileSync(process.execPath, [path.join(root, '../../node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    db = await createTestDatabase();
  });
  after(() => db.destroy());
  afterEach(killEverything);

  it('stops at start-up with one line naming a bad variable', async () => {
    const s = await start({ DATABASE_URL: db.url, AUTH_RATE_LIMIT: 'many' });
    expect(await s.exited).to.equal(2);
    const lines = s.output().trim().split('\n');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^Invalid configuration: AUTH_RATE_LIMIT: /);
  });

  it('on SIGTERM: readiness 503 at once, keeps serving with Connection: close for the drain, finishes an in-flight request, exits 0', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-proc-'));
    const s = await start({ DATABASE_URL: db.url, DATA_DIR: dataDir, SHUTDOWN_DRAIN_SECONDS: '2', INSTANCE_ID: 'proc-test-1' });
    try {
      await waitReady(s);
      expect(s.output()).to.match(/"msg":"ready at http:\/\/127\.0\.0\.1:\d+"/);
      // HOST=127.0.0.1 and no PUBLIC_BASE_URL: the printed URL is the origin sign-in accepts.
      const readyLine = JSON.parse(
        s
          .output()
          .split('\n')
          .find((l) => l.includes('"msg":"ready at '))!,
      ) as { url: string; publicBaseUrl: string; node: string };
      expect(readyLine.url).to.equal(`http://127.0.0.1:${s.port}`);
      // The service process runs on the Node the project installs (24), as the tests do.
      expect(readyLine.node, 'the ready line names the Node version').to.equal(process.versions.node);
      expect(Number(readyLine.node.split('.')[0]), 'Node major of the service process').to.equal(24);
      expect(new URL(readyLine.url).origin).to.equal(new URL(readyLine.publicBaseUrl).origin);
      const signIn = await fetch(`${readyLine.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: readyLine.url },
        body: JSON.stringify({ email: 'nobody@example.test', password: 'not the password' }),
      });
      expect(signIn.status).to.equal(401); // refused for the credentials, not 403 for the origin
      expect(s.output()).to.contain('"instance":"proc-test-1"');
      // A keep-alive connection that has already been answered once (so the server is reading it).
      const net = await import('node:net');
      const socket = net.connect(s.port, '127.0.0.1');
      let received = '';
      const answers: (() => void)[] = [];
      socket.on('data', (d) => {
        received += d;
        for (const wake of answers.splice(0)) wake();
      });
      socket.on('error', () => {}); // the server may reset the socket once it has answered and closes
      await new Promise((r) => socket.once('connect', r));
      const answered = (n: number) =>
        new Promise<void>((resolve) => {
          const check = () => ((received.match(/HTTP\/1\.1 /g) ?? []).length >= n ? resolve() : answers.push(check));
          check();
        });
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered(1);
      expect(received).to.match(/^HTTP\/1\.1 200 /);

      s.child.kill('SIGTERM');
      await waitForOutput(s, '"msg":"draining"');
      const ready = await fetch(`http://127.0.0.1:${s.port}/readyz`);
      expect(ready.status).to.equal(503);
      expect(((await ready.json()) as { code: string }).code).to.equal('service_unavailable');
      const during = await fetch(`http://127.0.0.1:${s.port}/healthz`);
      expect(during.status).to.equal(200);
      expect(during.headers.get('connection')).to.equal('close');

      // An in-flight request: its headers and half its body arrive during the drain, the rest after the close began.
      const body = JSON.stringify({ hello: 'world' });
      socket.write(`POST /api/v1/not-there HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
      await waitForOutput(s, '"msg":"closing"');
      socket.write(body.slice(5));
      await new Promise((r) => socket.once('close', r));
      const second = received.slice(received.lastIndexOf('HTTP/1.1 '));
      expect(second).to.match(/^HTTP\/1\.1 404 /);
      expect(second).to.contain('application/problem+json');
      expect(second.toLowerCase()).to.contain('connection: close');
      expect(await s.exited).to.equal(0);
      expect(s.output()).to.contain('"msg":"stopped"');
      expect(s.output()).to.not.match(/service_session=|password/i);
    } finally {
      s.child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a keep-alive request begun before Ctrl-C (its answer keeps the connection open) does not hold the stop: its connection is closed once it is answered, exit 0', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-proc-ka-'));
    const s = await start({ DATABASE_URL: db.url, DATA_DIR: dataDir });
    try {
      await waitReady(s);
      const net = await import('node:net');
      const socket = net.connect(s.port, '127.0.0.1');
      let received = '';
      socket.on('data', (d) => {
        received += d;
      });
      socket.on('error', () => {});
      const closed = new Promise((r) => socket.once('close', r));
      await new Promise((r) => socket.once('connect', r));
      // The headers before the signal: Node answers `100 Continue` as it hands the request to the
      // pipeline, which then runs (no drain yet, so no `Connection: close`); the body parser waits.
      const body = JSON.stringify({ email: 'nobody@example.test', password: 'not the password' });
      const continued = new Promise<void>((resolve) => {
        const check = () => (received.includes('100 Continue') ? resolve() : socket.once('data', check));
        check();
      });
      socket.write(
        `POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      await continued;
      s.child.kill('SIGINT');
      await waitForOutput(s, '"msg":"closing"');
      socket.write(body);
      await closed;
      const answer = received.slice(received.lastIndexOf('HTTP/1.1 '));
      expect(answer).to.match(/^HTTP\/1\.1 401 /);
      expect(answer.toLowerCase(), 'answered as a keep-alive connection').to.not.contain('connection: close');
      // Held open, the connection would have kept the close waiting until the 1 s limit (exit 1).
      expect(await s.exited).to.equal(0);
      expect(s.output()).to.contain('"msg":"stopped"');
    } finally {
      s.child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('serves Prometheus metrics on METRICS_PORT, not on the API port', async () => {
    const metricsPort = await freePort();
    const s = await start({ DATABASE_URL: db.url, METRICS_PORT: String(metricsPort), INSTANCE_ID: 'metrics-1' });
    try {
      await waitReady(s);
      await fetch(`http://127.0.0.1:${s.port}/healthz`);
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).to.equal(200);
      const text = await res.text();
      expect(text).to.match(/http_request_duration_seconds_count\{instance="metrics-1",method="GET",route="GET \/healthz",status="200"\} \d+/);
      expect(text).to.contain('db_pool_connections_in_use');
      expect(text).to.contain('nodejs_eventloop_lag_p99_seconds');
      expect((await fetch(`http://127.0.0.1:${s.port}/metrics`)).status).to.equal(404);
      s.child.kill('SIGTERM');
      expect(await s.exited).to.equal(0);
    } finally {
      s.child.kill('SIGKILL');
    }
  });

  it("metrics: sign-ins by outcome, rate-limit refusals and the mail queue's backlog, as the answers said", async () => {
    const metricsPort = await freePort();
    // An SMTP port where nothing listens: the confirmation mail stays in the outbox.
    const s = await start({
      DATABASE_URL: db.url,
      METRICS_PORT: String(metricsPort),
      INSTANCE_ID: 'metrics-2',
      SMTP_URL: `smtp://127.0.0.1:${await freePort()}`,
      LOCKOUT_MAX_FAILURES: '2',
      AUTH_RATE_LIMIT: '7',
    });
    try {
      await waitReady(s);
      const api = (path: string, body: object) =>
        fetch(`http://127.0.0.1:${s.port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const email = `metrics-${Date.now()}@example.com`;
      expect((await api('/api/v1/auth/register', { email, password: 'correct horse battery', displayName: 'M' })).status).to.equal(200);
      const statuses: number[] = [];
      statuses.push((await api('/api/v1/auth/login', { email, password: 'correct horse battery' })).status);
      for (let i = 0; i < 6; i++) statuses.push((await api('/api/v1/auth/login', { email, password: 'wrong password here' })).status);
      const seen = (status: number) => statuses.filter((x) => x === status).length;
      expect(seen(200)).to.equal(1);
      expect(seen(401), String(statuses)).to.be.greaterThan(0);
      expect(seen(423), String(statuses)).to.be.greaterThan(0);
      expect(seen(429), String(statuses)).to.be.greaterThan(0);
      const scrape = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const value = (text: string, series: string) => {
        const line = text.split('\n').find((l) => l.startsWith(`${series} `));
        return line === undefined ? undefined : Number(line.slice(series.length + 1));
      };
      const text = await scrape();
      expect(value(text, 'auth_logins_total{method="password",outcome="succeeded",instance="metrics-2"}')).to.equal(seen(200));
      expect(value(text, 'auth_logins_total{method="password",outcome="failed",instance="metrics-2"}')).to.equal(seen(401));
      expect(value(text, 'auth_logins_total{method="password",outcome="locked",instance="metrics-2"}')).to.equal(seen(423));
      expect(value(text, 'http_requests_refused_total{code="rate_limited",instance="metrics-2"}')).to.equal(seen(429));
      // The outbox's mail is a job of the queue accounts-mail: tried at once, refused, waiting for its retry.
      expect(value(text, 'jobs_queued{queue="accounts-mail",instance="metrics-2"}')).to.equal(1);
      expect(value(text, 'jobs_oldest_due_age_seconds{queue="accounts-mail",instance="metrics-2"}')).to.be.at.least(0);
      expect(value(text, 'jobs_given_up_total{queue="accounts-mail",instance="metrics-2"}')).to.equal(undefined);
      expect(value(text, 'db_pool_acquires_waiting{instance="metrics-2"}')).to.equal(0);
      expect(text).to.match(/^nodejs_eventloop_lag_p99_seconds\{instance="metrics-2"\} [\d.e-]+$/m);
      s.child.kill('SIGTERM');
      expect(await s.exited).to.equal(0);
    } finally {
      s.child.kill('SIGKILL');
    }
  });

  it('OpenTelemetry on with OTEL_EXPORTER_OTLP_ENDPOINT: spans of http, express and pg reach an OTLP/HTTP receiver under the X-Trace-Id of the answer and its log line', async () => {
    const otlp = await otlpReceiver();
    const { received, spansOf } = otlp;
    const s = await start({
      DATABASE_URL: db.url,
      INSTANCE_ID: 'traced-1',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'meal-planner-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,service.namespace=meals',
    });
    try {
      await waitReady(s);
      const res = await fetch(`http://127.0.0.1:${s.port}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'nobody@example.com', password: 'not the password' }),
      });
      expect(res.status).to.equal(401);
      const traceId = res.headers.get('x-trace-id')!;
      expect(traceId).to.match(/^[0-9a-f]{32}$/);
      expect(((await res.json()) as { traceId: string }).traceId).to.equal(traceId);
      await spansOf(traceId, ['@opentelemetry/instrumentation-http', '@opentelemetry/instrumentation-express', '@opentelemetry/instrumentation-pg']);
      const logLine = s
        .output()
        .split('\n')
        .filter((l) => l.includes('"route":"POST /api/v1/auth/login"'))
        .map((l) => JSON.parse(l))[0];
      expect(logLine?.traceId).to.equal(traceId);
      // An incoming traceparent is continued: its trace id is the answer's, the log's and the spans'.
      const parent = '4bf92f3577b34da6a3ce929d0e0e4736';
      const continued = await fetch(`http://127.0.0.1:${s.port}/api/v1/auth/providers`, { headers: { traceparent: `00-${parent}-00f067aa0ba902b7-01` } });
      expect(continued.headers.get('x-trace-id')).to.equal(parent);
      await spansOf(parent, ['@opentelemetry/instrumentation-http']);
      // Probes are not traced.
      await fetch(`http://127.0.0.1:${s.port}/healthz`);
      s.child.kill('SIGTERM');
      expect(await s.exited).to.equal(0);
      expect([...new Set(received.map((r) => r.traceId))].sort()).to.deep.equal([traceId, parent].sort());
      const names = (scope: string) =>
        received.filter((r) => r.traceId === traceId && r.scope === `@opentelemetry/instrumentation-${scope}`).map((r) => r.name);
      expect(names('http')).to.deep.equal(['POST /api/v1/auth/login']);
      expect(names('express')).to.deep.equal(['request handler']);
      expect(names('pg').length).to.be.greaterThan(0);
      // The resource: OTEL_SERVICE_NAME, the instance, OTEL_RESOURCE_ATTRIBUTES, the SDK's and the detectors' own.
      expect(received[0]!.resource).to.include({
        'service.name': 'meal-planner-test',
        'service.instance.id': 'traced-1',
        'deployment.environment.name': 'test',
        'service.namespace': 'meals',
        'telemetry.sdk.language': 'nodejs',
      });
      expect(received[0]!.resource).to.have.property('process.pid', s.child.pid);
      expect(received[0]!.resource).to.have.property('host.name');
      // Traces only: no metrics or logs are sent.
      expect([...new Set(otlp.paths)]).to.deep.equal(['/v1/traces']);
    } finally {
      s.child.kill('SIGKILL');
      otlp.close();
    }
  });

  it('OpenTelemetry reads the standard variables: OTEL_PROPAGATORS (b3), OTEL_TRACES_SAMPLER (parent-based, roots off), OTEL_SERVICE_NAME unset → meal-planner-api; OTEL_SDK_DISABLED=true sends nothing', async () => {
    const otlp = await otlpReceiver();
    const s = await start({
      DATABASE_URL: db.url,
      INSTANCE_ID: 'traced-2',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_PROPAGATORS: 'b3',
      OTEL_TRACES_SAMPLER: 'parentbased_always_off',
    });
    const disabled = await start({
      DATABASE_URL: db.url,
      INSTANCE_ID: 'traced-3',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SDK_DISABLED: 'true',
    });
    try {
      await Promise.all([waitReady(s), waitReady(disabled)]);
      // A sampled parent in a b3 header: continued and sampled, whatever the root sampler says.
      const parent = '80f198ee56343ba864fe8b2a57d3eff7';
      const sampled = await fetch(`http://127.0.0.1:${s.port}/api/v1/auth/providers`, { headers: { b3: `${parent}-e457b5a2e4d86bd1-1` } });
      expect(sampled.headers.get('x-trace-id')).to.equal(parent);
      await otlp.spansOf(parent, ['@opentelemetry/instrumentation-http']);
      // A root (no parent): always off, so never sent; a W3C traceparent is not read (b3 only).
      await fetch(`http://127.0.0.1:${s.port}/api/v1/auth/providers`);
      const w3c = await fetch(`http://127.0.0.1:${s.port}/api/v1/auth/providers`, {
        headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
      });
      expect(w3c.headers.get('x-trace-id')).to.not.equal('4bf92f3577b34da6a3ce929d0e0e4736');
      await fetch(`http://127.0.0.1:${disabled.port}/api/v1/auth/providers`, { headers: { b3: `${'1'.repeat(32)}-e457b5a2e4d86bd1-1` } });
      // Stopping sends what is buffered: after both exits, everything sent has arrived.
      s.child.kill('SIGTERM');
      disabled.child.kill('SIGTERM');
      expect(await s.exited).to.equal(0);
      expect(await disabled.exited).to.equal(0);
      expect([...new Set(otlp.received.map((r) => r.traceId))]).to.deep.equal([parent]);
      expect(otlp.received[0]!.resource).to.include({ 'service.name': 'meal-planner-api', 'service.instance.id': 'traced-2' });
    } finally {
      s.child.kill('SIGKILL');
      disabled.child.kill('SIGKILL');
      otlp.close();
    }
  });

  it('npm run migrate: applies the migrations and exits 0, then finds nothing to do', async () => {
    const fresh = await createTestDatabase();
    try {
      const run = () =>
        new Promise<{ code: number | null; out: string }>((resolve) => {
          let out = '';
          const child = spawn(process.execPath, ['dist/src/migrate.js'], {
            cwd: root,
            env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: fresh.url, PASSWORD_BREACH_API: 'off' },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          children.push(child);
          child.stdout.on('data', (d) => {
            out += d;
          });
          child.stderr.on('data', (d) => {
            out += d;
          });
          child.on('exit', (code) => resolve({ code, out }));
        });
      const first = await run();
      expect(first.code, first.out).to.equal(0);
      expect(first.out).to.contain('migrations applied');
      const second = await run();
      expect(second.code).to.equal(0);
      expect(second.out).to.contain('nothing to migrate');
    } finally {
      await fresh.destroy();
    }
  });

  it('starts an embedded PostgreSQL without DATABASE_URL, keeps its data across restarts, and changes no directory it does not own', async () => {
    // DATA_DIR inside a private directory (mkdtemp makes mode 700), as in a checkout under `mktemp -d`
    const privateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-embedded-'));
    expect(fs.statSync(privateDir).mode & 0o777).to.equal(0o700);
    const dataDir = path.join(privateDir, 'data');
    const asRoot = process.getuid?.() === 0;
    clusters.push(path.join(dataDir, 'postgres'));
    try {
      const first = await start({ DATA_DIR: dataDir });
      await waitReady(first);
      expect(first.output()).to.contain('"database":"embedded"');
      first.child.kill('SIGTERM');
      expect(await first.exited).to.equal(0);
      // Root: postgres runs as the postgres user, which cannot pass through the private directory;
      // the service keeps the cluster in a directory of its own and says where, instead of opening
      // the private one up.
      expect(fs.statSync(privateDir).mode & 0o777).to.equal(0o700);
      const where = /the embedded cluster for [^ ]+ is kept in ([^"\\]+)"/.exec(first.output())?.[1];
      if (asRoot) expect(where, first.output()).to.be.a('string');
      const clusterDir = asRoot ? where! : path.join(dataDir, 'postgres');
      clusters.push(clusterDir);
      expect(fs.existsSync(path.join(clusterDir, 'PG_VERSION'))).to.equal(true);
      const marker = fs.statSync(path.join(clusterDir, 'PG_VERSION')).mtimeMs;

      const second = await start({ DATA_DIR: dataDir });
      await waitReady(second);
      expect(second.output()).to.not.contain('migrations applied');
      expect(fs.statSync(path.join(clusterDir, 'PG_VERSION')).mtimeMs).to.equal(marker);
      second.child.kill('SIGTERM');
      expect(await second.exited).to.equal(0);
      if (asRoot) fs.rmSync(path.dirname(clusterDir), { recursive: true, force: true });
    } finally {
      fs.rmSync(privateDir, { recursive: true, force: true });
    }
  });
  it('Ctrl-C in development (SIGINT to the process group, as a terminal sends it): stops within 2 s, the service before its embedded PostgreSQL, without a warning; a second Ctrl-C stops at once', async () => {
    const privateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ctrl-c-'));
    const dataDir = path.join(privateDir, 'data');
    clusters.push(path.join(dataDir, 'postgres'));
    // The cluster's directory: DATA_DIR/postgres, or where the service says it keeps it (as root).
    const clusterOf = (s: Started) => /the embedded cluster for [^ ]+ is kept in ([^"\\]+)"/.exec(s.output())?.[1] ?? path.join(dataDir, 'postgres');
    const lines = (s: Started) =>
      s
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: number; msg: string; postgres?: string });
    try {
      // LOG_LEVEL=debug: the embedded server's own lines are in the log, in the order things happened.
      const first = await start({ DATA_DIR: dataDir, LOG_LEVEL: 'debug', SHUTDOWN_DRAIN_SECONDS: '10' }, { group: true });
      await waitReady(first);
      const clusterDir = clusterOf(first);
      clusters.push(clusterDir);
      const firstPid = postmasterPid(clusterDir);
      expect(firstPid, 'the embedded server runs').to.be.a('number');
      // A request or two first, so that the pools hold connections when the signal comes.
      for (let i = 0; i < 3; i++) expect((await fetch(`http://127.0.0.1:${first.port}/readyz`)).status).to.equal(200);
      const sent = performance.now();
      process.kill(-first.child.pid!, 'SIGINT');
      expect(await first.exited).to.equal(0);
      const ms = performance.now() - sent;
      expect(ms, `stopped after ${Math.round(ms)} ms`).to.be.below(2000);
      await gone(clusterDir, firstPid!);
      const log = lines(first);
      const at = (test: (l: { msg: string; postgres?: string }) => boolean) => log.findIndex(test);
      const closing = at((l) => l.msg === 'closing');
      expect(closing, first.output()).to.be.greaterThan(-1);
      expect(at((l) => l.msg === 'stopped')).to.be.greaterThan(closing);
      // The server was asked to stop by the service once it had closed (a "fast" shutdown, its stop()),
      // never by the terminal's SIGINT (which PostgreSQL takes as a "smart" shutdown request).
      const shutdownRequest = at((l) => /received fast shutdown request/.test(l.postgres ?? ''));
      if (shutdownRequest !== -1) expect(shutdownRequest, first.output()).to.be.greaterThan(closing);
      expect(first.output()).to.not.match(/received smart shutdown request/);
      expect(first.output()).to.match(/"drainSeconds":0/);
      // (as root, the one notice where the cluster is kept: the private directory is not the postgres user's to pass)
      const warnings = log.filter((l) => l.level >= 40 && !/cannot pass through/.test(l.postgres ?? ''));
      expect(warnings.map((l) => l.msg)).to.deep.equal([]);
      expect(first.output()).to.not.match(/Connection ended unexpectedly|ECONNREFUSED|terminating connection due to administrator command/);

      // A second Ctrl-C while the first is being handled: out at once; the exit guard stops the embedded server.
      const second = await start({ DATA_DIR: dataDir, SHUTDOWN_DRAIN_SECONDS: '10' }, { group: true });
      await waitReady(second);
      const pid = postmasterPid(clusterDir);
      expect(pid).to.be.a('number');
      // A request in flight (its body half sent) holds the first stop open: the second Ctrl-C cuts it short.
      const net = await import('node:net');
      const socket = net.connect(second.port, '127.0.0.1');
      socket.on('error', () => {});
      await new Promise((r) => socket.once('connect', r));
      socket.write('POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email"');
      process.kill(-second.child.pid!, 'SIGINT');
      await waitForOutput(second, '"msg":"closing"');
      const twice = performance.now();
      process.kill(-second.child.pid!, 'SIGINT');
      expect(await second.exited).to.equal(130);
      socket.destroy();
      expect(performance.now() - twice).to.be.below(1000);
      expect(second.output()).to.contain('stopping at once (second signal)');
      // The server was told to stop (fast) as the service exited.
      await gone(clusterDir, pid!);
    } finally {
      killEverything();
      fs.rmSync(privateDir, { recursive: true, force: true });
    }
  });

  it('SIGINT under NODE_ENV=production keeps the drain (as SIGTERM does)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-proc-prod-'));
    const s = await start(
      { NODE_ENV: 'production', DATABASE_URL: db.url, DATA_DIR: dataDir, SESSION_SECRET: 'a'.repeat(40), SHUTDOWN_DRAIN_SECONDS: '5' },
      { group: true },
    );
    try {
      await waitReady(s);
      process.kill(-s.child.pid!, 'SIGINT');
      await waitForOutput(s, '"msg":"draining"');
      expect(s.output()).to.match(/"drainSeconds":5/);
      expect((await fetch(`http://127.0.0.1:${s.port}/readyz`)).status).to.equal(503);
      expect(await s.exited).to.equal(0);
      // A 503 of /readyz during the drain is planned: no warning for it.
      expect(s.output()).to.not.match(/"level":(40|50|60)/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
