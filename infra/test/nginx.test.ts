import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { EXAMPLE_FILE, exampleNginxConfig, renderNginxConfig, TEMPLATE_FILE } from '../src/nginx.js';

const template = fs.readFileSync(TEMPLATE_FILE, 'utf8');

/** Directive text without comments. */
function directives(conf: string): string {
  return conf
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, '').trimEnd())
    .filter((l) => l.trim() !== '')
    .join('\n');
}

/** The body of the first block opened by `opener` (e.g. `upstream meal_planner`). */
function block(conf: string, opener: RegExp): string {
  const m = opener.exec(conf);
  if (!m) throw new Error(`no block ${opener}`);
  let depth = 0;
  for (let i = conf.indexOf('{', m.index); i < conf.length; i++) {
    if (conf[i] === '{') depth++;
    else if (conf[i] === '}' && --depth === 0) return conf.slice(conf.indexOf('{', m.index) + 1, i);
  }
  throw new Error(`unclosed block ${opener}`);
}

describe('nginx config (static)', () => {
  const conf = directives(renderNginxConfig({ listen: 8080, upstreams: ['10.0.0.1:8080', '10.0.0.2:8080'] }));

  it('is a template with exactly the LISTEN and UPSTREAMS placeholders, and nginx.conf is it rendered', () => {
    expect([...template.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]).sort()).to.deep.equal(['LISTEN', 'UPSTREAMS']);
    expect(fs.readFileSync(EXAMPLE_FILE, 'utf8'), 'regenerate with npm run -s nginx-conf -- --example').to.equal(exampleNginxConfig());
  });

  it('balances round robin over the instances, with keep-alive connections to them', () => {
    const upstream = block(conf, /upstream\s+meal_planner\s*\{/);
    expect(upstream).to.not.match(/\b(least_conn|ip_hash|hash|random)\b/);
    expect(upstream).to.match(/^\s*keepalive\s+\d+;/m);
    expect(upstream.match(/^\s*server\s/gm)).to.have.length(2);
    const location = block(conf, /location\s+\/\s*\{/);
    expect(location).to.match(/proxy_http_version\s+1\.1;/);
    expect(location).to.match(/proxy_set_header\s+Connection\s+"";/);
  });

  it('tries another instance only on a connection error or timeout: never on the service answering 503, never a non-idempotent request', () => {
    const lines = conf.match(/proxy_next_upstream\s[^;]*;/g) ?? [];
    expect(lines).to.have.length(1);
    const values = lines[0]!.replace(/^proxy_next_upstream\s+|;$/g, '').split(/\s+/);
    expect(values).to.have.members(['error', 'timeout']);
    expect(conf).to.not.match(/http_50[234]|non_idempotent/);
    expect(conf).to.not.match(/proxy_intercept_errors\s+on/);
    // max_fails counts only what proxy_next_upstream lists, so a 503 never marks an instance down
    for (const server of block(conf, /upstream\s+meal_planner\s*\{/).match(/^\s*server\s+[^{;]*;/gm) ?? [])
      expect(server).to.match(/max_fails=\d+ fail_timeout=\d+s/);
  });

  it('passes the client address and scheme, lets the service answer its own 413, and does not expose /metrics', () => {
    const location = block(conf, /location\s+\/\s*\{/);
    expect(location).to.match(/proxy_set_header\s+X-Forwarded-For\s+\$(remote_addr|proxy_add_x_forwarded_for);/);
    expect(location).to.match(/proxy_set_header\s+X-Forwarded-Proto\s+\$scheme;/);
    const size = /client_max_body_size\s+(\d+)([km]?);/.exec(conf);
    const bytes = Number(size![1]) * ({ k: 1024, m: 1024 * 1024 } as Record<string, number>)[size![2]!]!;
    expect(bytes, 'client_max_body_size above the 64 kB the service checks').to.be.above(64 * 1024);
    expect(block(conf, /location\s+\^~\s+\/metrics\s*\{/)).to.match(/deny\s+all;/);
  });
});

/** nginx from PATH or /usr/sbin; as root, installs Debian's nginx-light once if missing (INFRA_NGINX_INSTALL=0 turns that off). */
function findNginx(): { bin?: string; why?: string } {
  const candidates = () => ['nginx', '/usr/sbin/nginx'].filter((c) => spawnSync(c, ['-v'], { stdio: 'ignore' }).status === 0);
  let found = candidates()[0];
  if (found) return { bin: found };
  if (process.env.INFRA_NGINX_INSTALL === '0') return { why: 'nginx is not installed and INFRA_NGINX_INSTALL=0' };
  if (process.getuid?.() !== 0) return { why: 'nginx is not installed and installing it needs root (apt-get install nginx-light)' };
  const apt = (args: string[]) => spawnSync('apt-get', args, { stdio: 'ignore', timeout: 240_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (apt(['install', '-y', '-qq', 'nginx-light']).status !== 0) {
    apt(['update', '-qq']);
    apt(['install', '-y', '-qq', 'nginx-light']);
  }
  found = candidates()[0];
  return found ? { bin: found } : { why: 'nginx is not installed and apt-get install nginx-light failed' };
}

async function listen(handler: http.RequestListener): Promise<http.Server> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function port(server: http.Server): number {
  return (server.address() as AddressInfo).port;
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const s = await listen(() => {});
  const p = port(s);
  await new Promise((r) => s.close(r));
  return p;
}

async function request(p: number, pathname: string, init: { method?: string; body?: string } = {}) {
  const res = await fetch(`http://127.0.0.1:${p}${pathname}`, {
    method: init.method ?? 'GET',
    body: init.body,
    headers: { 'content-type': 'application/json' },
  });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text(), backend: res.headers.get('x-backend') };
}

describe('nginx config (nginx -t and behaviour, with the nginx binary)', function () {
  this.timeout(300_000);
  let bin: string | undefined;
  let dir: string;
  const children: ChildProcess[] = [];
  const servers: http.Server[] = [];

  before(function () {
    const found = findNginx();
    if (!found.bin) {
      console.log(`      (skipped: ${found.why})`);
      this.skip();
    }
    bin = found.bin;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'infra-nginx-'));
  });

  after(async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The template rendered for these ports; for a test run only: temp paths and pid in a directory of its own. */
  function write(listenPort: number, upstreams: string[]): string {
    const conf = renderNginxConfig({ listen: `127.0.0.1:${listenPort}`, upstreams })
      .replace(/^pid .*$/m, `pid ${dir}/nginx.pid;`)
      .replace(
        /^http \{$/m,
        `http {\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n  fastcgi_temp_path ${dir}/fastcgi;\n  uwsgi_temp_path ${dir}/uwsgi;\n  scgi_temp_path ${dir}/scgi;`,
      );
    const file = path.join(dir, 'nginx.conf');
    fs.writeFileSync(file, conf);
    return file;
  }

  it('nginx -t accepts the template rendered with test ports', async () => {
    const file = write(await closedPort(), ['127.0.0.1:18081', '127.0.0.1:18082']);
    const t = spawnSync(bin!, ['-t', '-q', '-p', dir, '-e', 'stderr', '-c', file], { encoding: 'utf8' });
    expect(t.status, t.stderr).to.equal(0);
  });

  it("passes a service's 503 through without ejecting it, retries a refused connection even for POST, and answers problem+json when none answers", async () => {
    const hits = { a: 0, b: 0 };
    let aAnswers503 = true;
    const backend =
      (name: 'a' | 'b'): http.RequestListener =>
      (req, res) => {
        hits[name]++;
        req.resume();
        req.on('end', () => {
          if (name === 'a' && aAnswers503) {
            res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '5', 'x-backend': name });
            res.end('{"code":"service_unavailable"}');
          } else {
            res.writeHead(req.url === '/big' ? 413 : 200, { 'content-type': 'application/json', 'x-backend': name });
            res.end('{}');
          }
        });
      };
    const a = await listen(backend('a'));
    const b = await listen(backend('b'));
    servers.push(a, b);
    const dead = await closedPort();
    const front = await closedPort();
    const file = write(front, [`127.0.0.1:${port(a)}`, `127.0.0.1:${port(b)}`, `127.0.0.1:${dead}`]);
    const nginx = spawn(bin!, ['-p', dir, '-e', 'stderr', '-c', file, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(nginx);
    let log = '';
    nginx.stderr!.on('data', (d) => (log += d));
    for (let i = 0; ; i++) {
      const up = await request(front, '/nginx-health').catch(() => undefined);
      if (up?.status === 200) break;
      if (i > 100) throw new Error(`nginx did not start:\n${log}`);
      await new Promise((r) => setTimeout(r, 50));
    }

    // Round robin over a, b and the dead one; the dead one is refused and the request goes on to
    // the next, POST included (nothing was sent). a's 503 reaches the client as it is.
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await request(front, '/api/v1/x', { method: i % 2 ? 'POST' : 'GET', body: i % 2 ? '{}' : undefined }));
    expect(answers.filter((r) => r.status === 503).every((r) => r.backend === 'a' && r.type === 'application/problem+json')).to.equal(true);
    expect(answers.filter((r) => r.status === 503).length, 'a answered its own 503s').to.be.at.least(4);
    expect(
      answers.every((r) => r.status === 200 || r.status === 503),
      JSON.stringify(answers),
    ).to.equal(true);
    // a was not marked failed by its 503s: it still gets its share
    expect(hits.a, `hits ${JSON.stringify(hits)}`).to.be.at.least(4);

    // a body over the service's 64 kB reaches the service (which answers 413 itself); one over nginx's limit gets a problem
    const big = await request(front, '/big', { method: 'POST', body: `"${'x'.repeat(100 * 1024)}"` });
    expect(big.status).to.equal(aAnswers503 && big.backend === 'a' ? 503 : 413);
    expect(big.backend, 'answered by an instance').to.be.oneOf(['a', 'b']);
    const huge = await request(front, '/big', { method: 'POST', body: `"${'x'.repeat(400 * 1024)}"` });
    expect(huge.status).to.equal(413);
    expect(huge.type).to.equal('application/problem+json');

    expect((await request(front, '/metrics')).status, '/metrics').to.equal(403);

    // no instance answers: nginx's own 503 problem, not an HTML error page
    aAnswers503 = false;
    a.closeAllConnections();
    b.closeAllConnections();
    await Promise.all([new Promise((r) => a.close(r)), new Promise((r) => b.close(r))]);
    const none = await request(front, '/api/v1/x');
    expect(none.status).to.equal(503);
    expect(none.type).to.equal('application/problem+json');
    expect(JSON.parse(none.text)).to.include({ status: 503, code: 'service_unavailable' });
  });
});
