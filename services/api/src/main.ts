import type { Server } from 'node:http';
import { createKnex } from '@svc/db';
import { createLogger, instrumentKnex } from '@svc/http-kit';
import { type Config, ConfigError, loadConfig } from './config.js';
import { openDatabase } from './database.js';
import { buildService } from './service.js';

const logger = createLogger({ name: 'api' });

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

  if (!config.databaseUrl) logger.info({ dir: `${config.dataDir}/postgres` }, 'using the embedded PostgreSQL');
  const database = await openDatabase(config, (line) => logger.debug({ postgres: line }, 'postgres'));
  const embedded = database.embedded;
  const knex = instrumentKnex(createKnex(database.url, { poolMax: 20 }));
  const service = await buildService({ config, knex, logger });
  const server: Server = service.app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.keepAliveTimeout = 65_000; // longer than typical load balancer idle timeouts
  server.headersTimeout = 66_000;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info(
    {
      url: `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}`,
      publicBaseUrl: config.publicBaseUrl,
      database: config.databaseUrl ? 'DATABASE_URL' : 'embedded',
    },
    'ready',
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    const force = setTimeout(() => {
      logger.error('drain took too long; exiting');
      process.exit(1);
    }, 25_000);
    force.unref();
    // Stop accepting and let in-flight requests finish. Keep-alive sockets are closed as soon as
    // they are idle (at once, or when their request has been answered), so they cannot hold the
    // drain open for the keep-alive timeout.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      const sweeper = setInterval(() => server.closeIdleConnections(), 100);
      sweeper.unref();
    });
    await service.close();
    await knex.destroy();
    if (embedded) await embedded.stop();
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
