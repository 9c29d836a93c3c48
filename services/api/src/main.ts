import type { Server } from 'node:http';
import os from 'node:os';
import type { Config } from './config.js';
import { startTracing } from './tracing.js';

// Tracing (only when OTEL_EXPORTER_OTLP_ENDPOINT is set) must be running before express, pg and
// the service's own modules are loaded, so that its instrumentations can patch them: hence the
// dynamic imports after it.
const tracing = await startTracing({ instanceId: process.env.INSTANCE_ID?.trim() || os.hostname() });
const { createKnex, runMigrations } = await import('@svc/db');
const { createHttpServer, createLogger, instrumentKnex, systemClock } = await import('@svc/http-kit');
const { browserHost, ConfigError, loadConfig } = await import('./config.js');
const { openDatabase } = await import('./database.js');
const { ServiceMetrics } = await import('./observability.js');
const { allMigrations, buildService } = await import('./service.js');
const { tuneHeap } = await import('./heap.js');
const { prioritizeEventLoop } = await import('./threads.js');

let logger = createLogger({ name: 'api' });

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
  if (!config.databaseUrl) logger.info({ dir: `${config.dataDir}/postgres` }, 'using the embedded PostgreSQL');
  const database = await openDatabase(
    config,
    (line) => logger.debug({ postgres: line }, 'postgres'),
    (line) => logger.warn({ postgres: line }, 'embedded PostgreSQL'),
  );
  const embedded = database.embedded;
  const knex = instrumentKnex(
    createKnex(database.url, {
      poolMax: 20,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      unansweredMs: config.dbUnansweredMs,
      transactionPooling: config.dbTransactionPooling,
      logger,
    }),
  );
  // Migrations may run longer than any request may: their own connection, without statement_timeout
  // (nor the frozen-database watch: a migration waiting for another instance's lock answers nothing).
  const migrator = createKnex(database.url, { poolMax: 2, unansweredMs: 0, logger });
  try {
    const applied = await runMigrations(migrator, allMigrations);
    if (applied.length) logger.info({ applied }, 'migrations applied');
  } finally {
    await migrator.destroy();
  }
  const metrics = config.metricsPort === undefined ? undefined : new ServiceMetrics({ labels: { instance: config.instanceId } });
  metrics?.watchPool(knex);
  let draining = false;
  const service = await buildService({ config, knex, logger, metrics, draining: () => draining });
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
  logger.info(
    {
      url: `http://${browserHost(config.host)}:${port}`,
      publicBaseUrl: config.publicBaseUrl,
      database: config.databaseUrl ? 'DATABASE_URL' : 'embedded',
      node: process.versions.node,
    },
    'ready',
  );

  let stopping = false;
  // SIGTERM: readiness answers 503 at once and every answer carries `Connection: close`, while the
  // instance keeps serving for SHUTDOWN_DRAIN_SECONDS so the balancer (readiness probe, or a
  // closed keep-alive connection) stops sending to it; then it stops accepting, finishes what is in
  // flight (at most SHUTDOWN_TIMEOUT_SECONDS), stops the mail worker (a claimed mail is finished or
  // released, never lost), closes the pools and exits 0.
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    draining = true;
    logger.info({ signal, drainSeconds: config.shutdownDrainSeconds }, 'draining');
    await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainSeconds * 1000));
    logger.info('closing');
    const force = setTimeout(() => {
      logger.error('in-flight requests took too long; exiting');
      process.exit(1);
    }, config.shutdownTimeoutSeconds * 1000);
    force.unref();
    // Keep-alive sockets are closed as soon as they are idle (at once, or when their request has
    // been answered), so they cannot hold the close open for the keep-alive timeout.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      const sweeper = setInterval(() => server.closeIdleConnections(), 100);
      sweeper.unref();
    });
    await service.close();
    metricsServer?.close();
    await knex.destroy();
    if (embedded) await embedded.stop();
    await tracing?.shutdown().catch(() => {});
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  logger.fatal({ err }, 'start-up failed');
  process.exit(1);
});
