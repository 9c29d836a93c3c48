import fs from 'node:fs';
import path from 'node:path';
import { type EmbeddedDatabase, runningEmbeddedPostgres, startEmbeddedPostgres } from '@svc/db';
import type { Config } from './config.js';

export interface Database {
  url: string;
  /** Set when this process started the embedded server (and so must stop it). */
  embedded?: EmbeddedDatabase;
}

/**
 * DATABASE_URL when set. Otherwise the embedded server in DATA_DIR: the one already running there
 * (another `npm start` or the admin CLI next to it), or one started now.
 */
export async function openDatabase(config: Config, log: (line: string) => void = () => {}, notice: (line: string) => void = log): Promise<Database> {
  if (config.databaseUrl) return { url: config.databaseUrl };
  const dir = path.join(config.dataDir, 'postgres');
  const running = runningEmbeddedPostgres(dir);
  if (running) return { url: running };
  fs.mkdirSync(config.dataDir, { recursive: true });
  const embedded = await startEmbeddedPostgres({ dir, log, notice });
  return { url: embedded.url, embedded };
}
