/**
 * The bench's load generators, behind one call: wrk (C, Debian's `wrk`) when it is on the PATH,
 * else autocannon (Node, an npm dependency of the bench). Both keep `connections` connections busy
 * for `seconds` and report the same figures.
 *
 * Why wrk first: the load generator runs on the same cores as what it measures, so what it spends
 * on each answer is taken from the service. autocannon parses answers in JavaScript (http-parser-js):
 * on a 2-core VM it spent 0.03 ms of CPU per GET /me answer and 0.17 ms per 35 kB events page, as
 * much as the service spends on the page itself; wrk's cost per answer is a fraction of that. The
 * choice is printed with every run (`--driver` forces one).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

export type Driver = 'wrk' | 'autocannon';

export interface LoadRequest {
  method: 'GET' | 'PATCH' | 'POST' | 'PUT';
  path: string;
  body?: unknown;
}

export interface LoadSpec {
  base: string;
  /** Sent in turn, one after the other, over every connection. */
  requests: LoadRequest[];
  /**
   * Sessions (`name=value` cookies) sent in turn, one per request (or, with autocannon and one
   * request, one per connection); none when empty. As many as `requests`: request i always goes
   * with session i.
   */
  cookies: string[];
  /** Headers sent with every request besides the cookie (a scenario's `Authorization: Bearer`). */
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  /** Requests answered per second. */
  rps: number;
  /** Latency percentiles (ms). */
  p50: number;
  p99: number;
  /** Answers received (any status). */
  answered: number;
  /** Answers whose status is not 2xx. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
}

/** wrk when it is installed, else autocannon; `wanted` forces one (an error when wrk is asked for and missing). */
export function pickDriver(wanted?: string): Driver {
  const hasWrk = spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
  if (wanted === 'wrk' && !hasWrk) throw new Error('--driver wrk: wrk is not on the PATH (Debian: apt-get install wrk)');
  if (wanted !== undefined && wanted !== 'wrk' && wanted !== 'autocannon') throw new Error(`--driver: wrk or autocannon, not ${wanted}`);
  return (wanted as Driver | undefined) ?? (hasWrk ? 'wrk' : 'autocannon');
}

export function load(driver: Driver, spec: LoadSpec): Promise<LoadResult> {
  return driver === 'wrk' ? wrkLoad(spec) : autocannonLoad(spec);
}

/** CPU (ms, user + system) of this process and of its children that have ended (wrk runs as one). */
export function generatorCpuMs(): number {
  const self = process.cpuUsage();
  let children = 0;
  try {
    // /proc/self/stat: cutime and cstime (fields 16 and 17), in clock ticks (100 per second).
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    // not Linux: the children's share is not counted
  }
  return (self.user + self.system) / 1000 + children;
}

// ---------------------------------------------------------------------------------------------
// wrk

const luaString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/** The wrk script: each request is the next of `requests`, with the next cookie; `done` prints one JSON line. */
function wrkScript(spec: LoadSpec): string {
  const requests = spec.requests
    .map((r) => `{ method = ${luaString(r.method)}, path = ${luaString(r.path)}, body = ${r.body === undefined ? 'nil' : luaString(JSON.stringify(r.body))} }`)
    .join(',\n  ');
  const cookies = spec.cookies.map(luaString).join(', ');
  const extra = Object.entries(spec.headers ?? {})
    .map(([k, v]) => `headers[${luaString(k)}] = ${luaString(v)}`)
    .join('\n  ');
  return `local requests = {
  ${requests}
}
local cookies = { ${cookies} }
local turn = 0
request = function()
  local r = requests[(turn % #requests) + 1]
  local headers = { ["Content-Type"] = "application/json" }
  ${extra}
  if #cookies > 0 then headers["Cookie"] = cookies[(turn % #cookies) + 1] end
  turn = turn + 1
  return wrk.format(r.method, r.path, headers, r.body)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('BENCH_RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, latency:percentile(50), latency:percentile(99)))
end
`;
}

async function wrkLoad(spec: LoadSpec): Promise<LoadResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-'));
  const script = path.join(dir, 'load.lua');
  fs.writeFileSync(script, wrkScript(spec));
  try {
    // One thread: wrk's one core-share is what the answers cost to read, not a second busy loop.
    const args = ['-t1', `-c${spec.connections}`, `-d${spec.seconds}s`, '--timeout', '30s', '-s', script, spec.base];
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`wrk exited with ${code}: ${stderr || stdout}`))));
    });
    const line = /^BENCH_RESULT (.*)$/m.exec(out);
    if (!line) throw new Error(`wrk printed no result: ${out}`);
    const r = JSON.parse(line[1]!) as Record<string, number>;
    const answered = r.requests!;
    return {
      rps: answered / (r.duration_us! / 1e6),
      p50: r.p50_us! / 1000,
      p99: r.p99_us! / 1000,
      answered,
      // wrk counts statuses above 399 as errors.status; the bench's requests expect 200/201 only.
      non2xx: r.status!,
      errors: r.connect! + r.read! + r.write! + r.timeout!,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// autocannon

async function autocannonLoad(spec: LoadSpec): Promise<LoadResult> {
  const headers = { 'content-type': 'application/json', ...spec.headers };
  let turn = 0;
  const cookies = spec.cookies;
  const nextCookie = () => cookies[turn++ % cookies.length]!;
  const common = { url: spec.base, connections: spec.connections, duration: spec.seconds, headers, timeout: 30 };
  let r: autocannon.Result;
  if (spec.requests.length > 1 || spec.requests[0]!.body !== undefined) {
    // Several requests in turn: each one picks the next session as it is built.
    r = await autocannon({
      ...common,
      // As many requests as sessions: each request keeps its own session (as wrk pairs them, turn by turn).
      requests: spec.requests.map((x, i) => ({
        method: x.method,
        path: x.path,
        body: x.body === undefined ? undefined : JSON.stringify(x.body),
        setupRequest: (req: autocannon.Request) =>
          cookies.length ? { ...req, headers: { ...req.headers, cookie: cookies.length === spec.requests.length ? cookies[i]! : nextCookie() } } : req,
      })),
    });
  } else {
    // One request: each connection keeps one session of its own, built once.
    const only = spec.requests[0]!;
    r = await autocannon({
      ...common,
      method: only.method,
      url: spec.base + only.path,
      setupClient: cookies.length ? (client) => client.setHeaders({ ...headers, cookie: nextCookie() }) : undefined,
    });
  }
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    answered: r['2xx'] + r.non2xx,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}
