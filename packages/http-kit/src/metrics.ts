import http, { type Server } from 'node:http';
import type { Knex } from 'knex';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Prometheus metrics of one instance (prom-client). The host creates one `Metrics`, hands it to
 * `createHttpApp` (request durations, rate-limit refusals) and to the packages that count things
 * of their own (logins), adds gauges read at scrape time (pool, outbox), and serves the registry
 * on a port of its own that the public balancer does not expose (`serve`).
 */
export class Metrics {
  readonly registry = new Registry();
  /** Request duration by method, route pattern (never the raw path) and status. */
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  /** Requests refused with 429, by problem code (rate_limited, quota_exceeded, ai_paused). */
  readonly refused = new Counter({
    name: 'http_requests_refused_total',
    help: 'Requests answered 429, by problem code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  /** Password and social sign-ins by outcome: succeeded, failed, locked. */
  readonly logins = new Counter({
    name: 'auth_logins_total',
    help: 'Sign-in attempts by method and outcome (succeeded, failed, locked)',
    labelNames: ['method', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Unasked mail (reset, confirmation, change-of-address, account-exists) dropped by a limit, by mail kind and limit (address, ip). */
  readonly unaskedMailDropped = new Counter({
    name: 'mail_unasked_dropped_total',
    help: 'Unasked mail dropped by the per-address or per-IP limit, by mail kind and limit',
    labelNames: ['kind', 'limit'] as const,
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean; labels?: Record<string, string> } = {}) {
    if (options.labels) this.registry.setDefaultLabels(options.labels);
    // Process metrics: CPU, memory, handles, GC, event-loop delay (nodejs_eventloop_lag_*).
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
  }

  /** A gauge whose value is read when Prometheus scrapes (errors leave the gauge unset, never fail the scrape). */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        try {
          this.set(await read());
        } catch {
          this.reset();
        }
      },
    });
  }

  /** PostgreSQL pool: connections in use and requests waiting for one. */
  watchPool(knex: Knex): void {
    const pool = () => (knex.client as { pool?: { numUsed(): number; numPendingAcquires(): number; numFree(): number } }).pool;
    this.gauge('db_pool_connections_in_use', 'PostgreSQL pool connections in use', () => pool()?.numUsed() ?? 0);
    this.gauge('db_pool_connections_free', 'PostgreSQL pool connections idle', () => pool()?.numFree() ?? 0);
    this.gauge('db_pool_acquires_waiting', 'Requests waiting for a PostgreSQL pool connection', () => pool()?.numPendingAcquires() ?? 0);
  }

  /** Records one finished request. */
  observe(method: string, route: string | null, status: number, seconds: number, problemCode?: string): void {
    this.httpDuration.observe({ method, route: route ?? 'unmatched', status: String(status) }, seconds);
    if (status === 429) this.refused.inc({ code: problemCode ?? 'unknown' });
  }

  /** The text Prometheus scrapes. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Serves GET /metrics on its own port (METRICS_PORT), apart from the API. */
  serve(port: number, host = '0.0.0.0'): Promise<Server> {
    const server = http.createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      this.text().then(
        ({ contentType, body }) => res.writeHead(200, { 'Content-Type': contentType }).end(body),
        () => res.writeHead(500).end(),
      );
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  }
}
