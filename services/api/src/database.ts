import fs from 'node:fs';
import path from 'node:path';
import { type EmbeddedDatabase, runningEmbeddedPostgres, startEmbeddedPostgres } from '@svc/db';
import type { Config } from './config.js';

export interface Database {
  url: string;
  /** Set when this process started the embedded server (and so must stop it). */
  embedded?: EmbeddedDatabase;
}

export interface DatabaseLog {
  /** The embedded server's own output. */
  log?: (line: string) => void;
  /** What an operator must know (where the cluster is kept when it could not be kept in DATA_DIR). */
  notice?: (line: string) => void;
  /** One line per start-up stage (starting the embedded server, and when it is ready). */
  stage?: (msg: string, fields: Record<string, unknown>) => void;
}

/**
 * DATABASE_URL when set. Otherwise the embedded server in DATA_DIR: the one already running there
 * (another `npm start` or the admin CLI next to it), or one started now.
 */
export async function openDatabase(config: Config, out: DatabaseLog = {}): Promise<Database> {
  if (config.databaseUrl) return { url: config.databaseUrl };
  const dir = path.join(config.dataDir, 'postgres');
  const running = runningEmbeddedPostgres(dir);
  if (running) {
    out.stage?.('using the embedded PostgreSQL already running', { dir });
    return { url: running };
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  out.stage?.('starting the embedded PostgreSQL', { dir });
  const started = performance.now();
  const embedded = await startEmbeddedPostgres({ dir, log: out.log, notice: out.notice ?? out.log });
  out.stage?.('embedded PostgreSQL ready', { port: embedded.port, ms: Math.round(performance.now() - started) });
  return { url: embedded.url, embedded };
}
