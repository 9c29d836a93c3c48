import fs from 'node:fs';
import path from 'node:path';
import type { Server } from 'node:http';
import { createKnex, createLogger, type EmbeddedDatabase, startEmbeddedPostgres } from '@svc/http-kit';
import { ConfigError, loadConfig } from './config.js';
import { buildService } from './service.js';

const logger = createLogger({ name: 'api' });

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const dir = path.join(config.dataDir, 'postgres');
    fs.mkdirSync(config.dataDir, { recursive: true });
    logger.info({ dir }, 'starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({ dir, log: (line) => logger.debug({ postgres: line }, 'postgres') });
    databaseUrl = embedded.url;
  }

  const knex = createKnex(databaseUrl, { poolMax: 20 });
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
  logger.info({ url: `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}`, publicBaseUrl: config.publicBaseUrl, database: embedded ? 'embedded' : 'DATABASE_URL' }, 'ready');

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
    // Stop accepting, let in-flight requests finish; idle keep-alive sockets are closed at once.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
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
