import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse } from 'yaml';
import { renderNginxConfig } from '../src/nginx.js';

const INFRA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// biome-ignore lint/suspicious/noExplicitAny: a parsed compose file
const compose: any = parse(fs.readFileSync(path.join(INFRA, 'compose.yaml'), 'utf8'), { merge: true });
const services = compose.services as Record<string, Record<string, unknown> & { environment?: Record<string, string> }>;

describe('compose.yaml', () => {
  it('runs PostgreSQL 16, Redis 7, Mailpit, two instances built from infra/Dockerfile and nginx, each with a healthcheck', () => {
    expect(Object.keys(services).sort()).to.deep.equal(['api-1', 'api-2', 'mailpit', 'nginx', 'postgres', 'redis']);
    expect(services.postgres!.image).to.match(/^postgres:16\b/);
    expect(services.redis!.image).to.match(/^redis:7\b/);
    expect(services.mailpit!.image).to.match(/^axllent\/mailpit:v\d/);
    for (const [name, s] of Object.entries(services)) {
      expect(s.healthcheck, `${name} healthcheck`).to.have.property('test');
      if (s.image) expect(String(s.image), `${name} image pinned`).to.not.match(/:latest$|^[^:]+$/);
    }
    for (const api of ['api-1', 'api-2']) {
      expect(services[api]!.build).to.deep.equal({ context: '..', dockerfile: 'infra/Dockerfile' });
      expect(fs.existsSync(path.resolve(INFRA, '..', 'infra/Dockerfile'))).to.equal(true);
    }
  });

  it('starts each service after what it needs is healthy', () => {
    for (const api of ['api-1', 'api-2'])
      expect(services[api]!.depends_on).to.deep.equal({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        mailpit: { condition: 'service_healthy' },
      });
    expect(services.nginx!.depends_on).to.deep.equal({ 'api-1': { condition: 'service_healthy' }, 'api-2': { condition: 'service_healthy' } });
  });

  it('wires the instances to the shared services, with SESSION_SECRET from the environment, never a literal', () => {
    for (const api of ['api-1', 'api-2']) {
      const env = services[api]!.environment!;
      expect(env.SESSION_SECRET, 'required variable').to.match(/^\$\{SESSION_SECRET:\?[^}]+\}$/);
      expect(env.DATABASE_URL).to.match(/@postgres:5432\//);
      expect(env.REDIS_URL).to.equal('redis://redis:6379');
      expect(env.SMTP_URL).to.equal('smtp://mailpit:1025');
      expect(env.TRUST_PROXY).to.equal('1');
      const drain = Number(env.SHUTDOWN_DRAIN_SECONDS) + Number(env.SHUTDOWN_TIMEOUT_SECONDS);
      expect(Number.parseInt(String(services[api]!.stop_grace_period), 10), 'stop_grace_period over drain + cap').to.be.above(drain);
      expect(services[api]!.ports, 'instances reached through nginx only').to.equal(undefined);
      // nginx closes idle upstream connections before a draining instance stops, so the instance never closes one under it.
      const idle = /^\s*keepalive_timeout\s+(\d+)s;/m.exec(fs.readFileSync(path.join(INFRA, 'nginx/nginx.conf.template'), 'utf8'));
      expect(Number(idle?.[1]), "nginx's upstream keepalive_timeout under SHUTDOWN_DRAIN_SECONDS").to.be.below(Number(env.SHUTDOWN_DRAIN_SECONDS));
    }
    for (const [name, s] of Object.entries(services))
      for (const [key, value] of Object.entries(s.environment ?? {}))
        if (/SECRET|PRIVATE_KEY|TOKEN/.test(key)) expect(String(value), `${name} ${key}`).to.match(/^\$\{\w+(:\?[^}]*)?\}$/);
  });

  it('mounts the nginx template and renders it with the two instances', () => {
    const nginx = services.nginx!;
    expect(nginx.volumes).to.include('./nginx/nginx.conf.template:/etc/nginx/templates/nginx.conf.template:ro');
    const env = nginx.environment!;
    expect(env.NGINX_ENVSUBST_OUTPUT_DIR).to.equal('/etc/nginx');
    const upstreams = [...env.UPSTREAMS!.matchAll(/server (\S+)/g)].map((m) => m[1]!);
    expect(upstreams).to.deep.equal(['api-1:8080', 'api-2:8080']);
    // what the image's envsubst makes of it
    const rendered = renderNginxConfig({ listen: env.LISTEN!, upstreams });
    expect(rendered).to.include('server api-1:8080');
  });
});
