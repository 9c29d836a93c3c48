/**
 * Renders infra/nginx/nginx.conf.template: `${LISTEN}` and `${UPSTREAMS}` are replaced, nothing
 * else (nginx's own `$variables` are left alone). Also a command line:
 *   npm run -w @svc/infra nginx-conf -- --listen 8080 127.0.0.1:8081 127.0.0.1:8082 > nginx.conf
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const NGINX_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'nginx');
export const TEMPLATE_FILE = path.join(NGINX_DIR, 'nginx.conf.template');

/** Parameters of every `server` line: only connection errors and timeouts count as failures (see the template). */
export const SERVER_PARAMETERS = 'max_fails=3 fail_timeout=5s';

export interface NginxOptions {
  /** `listen` argument: a port, or address:port. */
  listen: string | number;
  /** The instances, as host:port. */
  upstreams: readonly string[];
}

/** The `server` lines of the upstream block, indented as in the template. */
export function upstreamLines(upstreams: readonly string[]): string {
  if (upstreams.length === 0) throw new Error('at least one upstream is needed');
  for (const u of upstreams) if (!/^[\w.-]+:\d+$|^\[[\da-f:]+\]:\d+$|^unix:\S+$/i.test(u)) throw new Error(`not a host:port upstream: ${u}`);
  return upstreams.map((u) => `    server ${u} ${SERVER_PARAMETERS};`).join('\n');
}

/** The template with its two placeholders filled. */
export function renderNginxConfig(options: NginxOptions, template = fs.readFileSync(TEMPLATE_FILE, 'utf8')): string {
  const listen = String(options.listen);
  if (!/^(\S+:)?\d+$/.test(listen)) throw new Error(`not a listen address: ${listen}`);
  const values: Record<string, string> = { LISTEN: listen, UPSTREAMS: upstreamLines(options.upstreams) };
  return template.replace(/\$\{(LISTEN|UPSTREAMS)\}/g, (_, name: string) => values[name]!);
}

/** infra/nginx/nginx.conf: the template rendered for three instances on one machine (infra/README.md). */
export const EXAMPLE_FILE = path.join(NGINX_DIR, 'nginx.conf');
export const EXAMPLE_OPTIONS: NginxOptions = { listen: 8080, upstreams: ['127.0.0.1:8081', '127.0.0.1:8082', '127.0.0.1:8083'] };

export function exampleNginxConfig(): string {
  return (
    '# GENERATED from nginx.conf.template for three instances on this machine (ports 8081-8083);\n' +
    '# regenerate with `npm run -s -w @svc/infra nginx-conf -- --example > infra/nginx/nginx.conf`.\n' +
    renderNginxConfig(EXAMPLE_OPTIONS)
  );
}

function main(argv: string[]): void {
  if (argv[0] === '--example') {
    process.stdout.write(exampleNginxConfig());
    return;
  }
  let listen = '8080';
  const upstreams: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--listen') listen = argv[++i] ?? '';
    else upstreams.push(arg);
  }
  process.stdout.write(renderNginxConfig({ listen, upstreams }));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
