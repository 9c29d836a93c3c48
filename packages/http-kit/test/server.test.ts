import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import { ApiRouter, createHttpApp, createHttpServer, createLogger, sendJsonText } from '../src/index.js';
import { app, demoRouter } from './helpers.js';

async function listening(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe('createHttpServer', () => {
  it('serves the pipeline: headers, bodies, errors, keep-alive', async () => {
    const api = app([demoRouter()]);
    const server = createHttpServer(api);
    const base = await listening(server);
    try {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const get = (path: string, init: { method?: string; body?: string } = {}) =>
        new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
          const req = http.request(
            `${base}${path}`,
            { agent, method: init.method ?? 'GET', headers: init.body ? { 'Content-Type': 'application/json' } : {} },
            (res) => {
              let body = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => {
                body += c;
              });
              res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
            },
          );
          req.on('error', reject);
          req.end(init.body);
        });
      // Several requests on one kept-alive connection: each gets a request object of its own.
      for (let i = 0; i < 3; i++) {
        const ping = await get('/api/v1/ping');
        expect(ping.status).to.equal(200);
        expect(ping.headers['x-trace-id']).to.match(/^[0-9a-f]{32}$/);
        expect(ping.headers['content-security-policy']).to.be.a('string');
      }
      const missing = await get('/api/v1/nowhere');
      expect(missing.status).to.equal(404);
      expect(missing.headers['content-type']).to.match(/^application\/problem\+json/);
      const broken = await get('/api/v1/things', { method: 'POST', body: '{"name":' });
      expect(broken.status).to.equal(400);
      expect(JSON.parse(broken.body).code).to.be.a('string');
      agent.destroy();
    } finally {
      server.close();
    }
  });

  it('sendJsonText sends a Buffer as it is, as it sends a string: Content-Type, Content-Length in bytes, no body for HEAD', async () => {
    const text = JSON.stringify({ name: 'Smørbrød “x”', n: 1 });
    const api = new ApiRouter();
    for (const [path, body] of [
      ['/api/v1/text', text],
      ['/api/v1/bytes', Buffer.from(text, 'utf8')],
    ] as const) {
      api.route({ method: 'get', path, operationId: path.slice(8), summary: 'x', responses: { 200: { description: 'x' } } }, (_req, res) => {
        sendJsonText(res, body);
      });
    }
    const served = createHttpApp({ logger: createLogger({ level: 'silent' }), allowedOrigins: [], routers: [api] });
    for (const path of ['/api/v1/text', '/api/v1/bytes']) {
      const res = await request(served).get(path);
      expect(res.status, path).to.equal(200);
      expect(res.headers['content-type'], path).to.equal('application/json; charset=utf-8');
      expect(res.headers['content-length'], path).to.equal(String(Buffer.byteLength(text)));
      expect(res.text, path).to.equal(text);
      const head = await request(served).head(path);
      expect(head.headers['content-length'], path).to.equal(String(Buffer.byteLength(text)));
      expect(head.text ?? '', path).to.equal('');
    }
  });
});
