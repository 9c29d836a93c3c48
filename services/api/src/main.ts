import diagnostics from 'node:diagnostics_channel';
import type { Server } from 'node:http';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from './config.js';
import { startTracing } from './tracing.js';

// Tracing (only when OTEL_EXPORTER_OTLP_ENDPOINT is set) must be running before express, pg and
// the service's own modules are loaded, so that its instrumentations can patch them: hence the
// dynamic imports after it.
const tracing = await startTracing({ instanceId: process.env.INSTANCE_ID?.trim() || os.hostname() });
const { createKnex, runMigrations } = await import('@svc/db');
const { createHttpServer, createLogger, instrumentKnex } = await import('@svc/http-kit');
const { browserHost, ConfigError, loadConfig } = await import('./config.js');
const { openDatabase } = await import('./database.js');
const { ServiceMetrics } = await import('./observability.js');
const { allMigrations, buildService, logMigrations } = await import('./service.js');
const { tuneHeap } = await import('./heap.js');
const { prioritizeEventLoop } = await import('./threads.js');

let logger = createLogger({ name: 'api' });

// Signals are ours from here on: a Ctrl-C during start-up (the embedded PostgreSQL starting,
// migrations running) stops at once, and the exit guard of `@svc/db` stops the embedded server,
// which sits in a process group of its own and so never sees the terminal's Ctrl-C itself.
let graceful: ((signal: NodeJS.Signals) => void) | undefined;
let signals = 0;
const SIGNAL_EXIT: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };
const onSignal = (signal: NodeJS.Signals) => {
  signals += 1;
  if (signals === 1 && graceful) return graceful(signal);
  logger.info({ signal }, graceful ? 'stopping at once (second signal)' : 'stopped during start-up');
  process.exit(SIGNAL_EXIT[signal] ?? 1);
};
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);
// The terminal closed: stop as for Ctrl-C (else the embedded server, in a group of its own, would outlive us).
process.on('SIGHUP', onSignal);

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  logger = createLogger({ name: 'api', instance: config.instanceId });
  tuneHeap(config.heapGrowingPercent);
  const priorities = await prioritizeEventLoop(config.helperThreadNice, config.threadpoolIdle).catch((err: unknown) => {
    logger.warn({ err }, "could not lower the helper threads' priority");
    return undefined;
  });
  if (priorities) logger.debug({ ...priorities, nice: config.helperThreadNice }, 'helper threads run below the event loop');
  const database = await openDatabase(config, {
    log: (line) => logger.debug({ postgres: line }, 'postgres'),
    notice: (line) => logger.warn({ postgres: line }, 'embedded PostgreSQL'),
    stage: (msg, fields) => logger.info(fields, msg),
  });
  const embedded = database.embedded;
  const connection = { statementTimeoutMs: config.dbStatementTimeoutMs, unansweredMs: config.dbUnansweredMs, transactionPooling: config.dbTransactionPooling };
  const knex = instrumentKnex(createKnex(database.url, { ...connection, poolMax: 20, logger }));
  // Migrations may run longer than any request may: their own connection, without statement_timeout
  // or a read timeout (a migration waiting for another instance's lock answers nothing for a while).
  const migrator = createKnex(database.url, { poolMax: 2, logger });
  try {
    const applied = await runMigrations(migrator, allMigrations);
    logMigrations(logger, applied);
  } finally {
    await migrator.destroy();
  }
  const metrics = config.metricsPort === undefined ? undefined : new ServiceMetrics({ labels: { instance: config.instanceId } });
  metrics?.watchPool(knex);
  let draining = false;
  const service = await buildService({ config, knex, database: { url: database.url, options: connection }, logger, metrics, draining: () => draining });
  const metricsServer = metrics && config.metricsPort !== undefined ? await metrics.serve(config.metricsPort, config.host) : undefined;
  const server: Server = createHttpServer(service.app).listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Longer than typical load balancer idle timeouts; the request and headers timeouts are http-kit's (a trickled request is cut).
  server.keepAliveTimeout = 65_000;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${browserHost(config.host)}:${port}`;
  logger.info(
    {
      url,
      publicBaseUrl: config.publicBaseUrl,
      database: config.databaseUrl ? 'DATABASE_URL' : 'embedded',
      node: process.versions.node,
    },
    `ready at ${url}`,
  );

  // SIGTERM (and SIGINT in production): readiness answers 503 at once and every answer carries
  // `Connection: close`, while the instance keeps serving for SHUTDOWN_DRAIN_SECONDS so the
  // balancer (readiness probe, or a closed keep-alive connection) stops sending to it; then it
  // stops accepting, finishes what is in flight (at most SHUTDOWN_TIMEOUT_SECONDS), stops the mail
  // worker (a claimed mail is finished or released, never lost), closes the pools and exits 0.
  // Ctrl-C in development (SIGINT, NODE_ENV not production): no balancer to drain, so no drain,
  // at most 1 s for what is in flight, and the embedded server (asked to stop once the service has
  // closed its pools) is not waited for beyond 0.5 s after the signal: it finishes by itself. A second signal, either way, exits at once.
  const shutdown = async (signal: NodeJS.Signals) => {
    const signalled = performance.now();
    const quick = signal !== 'SIGTERM' && config.nodeEnv !== 'production';
    const drainSeconds = quick ? 0 : config.shutdownDrainSeconds;
    draining = true;
    logger.info({ signal, drainSeconds }, 'draining');
    if (drainSeconds > 0) await sleep(drainSeconds * 1000);
    logger.info('closing');
    const force = setTimeout(
      () => {
        logger.error('in-flight requests took too long; exiting');
        process.exit(1);
      },
      quick ? 1000 : config.shutdownTimeoutSeconds * 1000,
    );
    force.unref();
    // Keep-alive sockets are closed as soon as they are idle: those idle now by `close()` itself,
    // and each one still answering a request once its answer is sent (Node's own
    // `http.server.response.finish` channel tells; a request begun before the drain may not carry
    // `Connection: close`), so none holds the close open for the keep-alive timeout.
    const answered = (message: unknown) => {
      const { server: of } = message as { server?: unknown };
      if (of === server) setImmediate(() => server.closeIdleConnections());
    };
    diagnostics.subscribe('http.server.response.finish', answered);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    diagnostics.unsubscribe('http.server.response.finish', answered);
    await service.close();
    metricsServer?.close();
    await knex.destroy();
    clearTimeout(force);
    // The service is stopped and its pools are closed: only now the embedded server it started.
    if (embedded) {
      const stopped = embedded.stop().then(() => true);
      const waited = quick ? await Promise.race([stopped, sleep(Math.max(0, 500 - (performance.now() - signalled))).then(() => false)]) : await stopped;
      if (!waited) logger.info('the embedded PostgreSQL finishes its shutdown by itself');
    }
    await tracing?.shutdown().catch(() => {});
    // pino writes stdout asynchronously: what is queued goes out first, so `stopped` is the last line.
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    logger.info('stopped');
    process.exit(0);
  };
  graceful = (signal) => void shutdown(signal);
}

main().catch((err: unknown) => {
  logger.fatal({ err }, 'start-up failed');
  process.exit(1);
});
