import fs from 'node:fs';
import path from 'node:path';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '@svc/http-kit';
import type { Config } from './config.js';

export interface Database {
  url: string;
  /** Set when this process started the embedded server (and so must stop it). */
  embedded?: EmbeddedDatabase;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * DATABASE_URL when set. Otherwise the embedded server in DATA_DIR: the one already running there
 * (another `npm start` or the admin CLI next to it; postmaster.pid names its port), or one started
 * now.
 */
export async function openDatabase(config: Config, log: (line: string) => void = () => {}): Promise<Database> {
  if (config.databaseUrl) return { url: config.databaseUrl };
  const dir = path.join(config.dataDir, 'postgres');
  const pidFile = path.join(dir, 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    if (Number.isInteger(pid) && alive(pid) && Number.isInteger(port) && port > 0) {
      return { url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` };
    }
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const embedded = await startEmbeddedPostgres({ dir, log });
  return { url: embedded.url, embedded };
}
