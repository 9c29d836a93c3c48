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
    const small = JSON.stringify({ name: 'Smørbrød “x”', n: 1 });
    // Past the size up to which a Buffer goes out as text with its head.
    const large = JSON.stringify({ name: 'Smørbrød “x”'.repeat(100), n: 2 });
    const texts: Record<string, string> = { '/api/v1/text': small, '/api/v1/bytes': small, '/api/v1/large-bytes': large };
    const api = new ApiRouter();
    for (const [path, body] of [
      ['/api/v1/text', small],
      ['/api/v1/bytes', Buffer.from(small, 'utf8')],
      ['/api/v1/large-bytes', Buffer.from(large, 'utf8')],
    ] as const) {
      api.route({ method: 'get', path, operationId: path.slice(8), summary: 'x', responses: { 200: { description: 'x' } } }, (_req, res) => {
        sendJsonText(res, body);
      });
    }
    const served = createHttpApp({ logger: createLogger({ level: 'silent' }), allowedOrigins: [], routers: [api] });
    for (const [path, text] of Object.entries(texts)) {
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

describe('createHttpServer: a request trickled in is cut (issue 47)', () => {
  it('answers 408 request_timeout and closes a connection whose body trickles past the request timeout, while a prompt request on another connection is served', async () => {
    const server = createHttpServer(app([demoRouter()]), { requestTimeoutMs: 1_000, connectionsCheckMs: 200 });
    const base = await listening(server);
    const { port } = server.address() as { port: number };
    const net = await import('node:net');
    const socket = net.connect(port, '127.0.0.1');
    let trickle: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      const started = Date.now();
      socket.write('POST /api/v1/things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":"');
      // One byte every 50 ms: never finishes on its own (100,000 bytes would take over an hour).
      trickle = setInterval(() => {
        if (socket.writable) socket.write('a');
      }, 50);
      let answer = '';
      socket.on('data', (c: Buffer) => {
        answer += c.toString('utf8');
      });
      socket.on('error', () => {}); // writes racing the close
      const prompt = await request(base).post('/api/v1/things').send({ name: 'ok' });
      expect(prompt.status).to.equal(201);
      await new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const lived = Date.now() - started;
      expect(answer).to.match(/^HTTP\/1\.1 408 /);
      expect(answer).to.include('"code":"request_timeout"');
      // The limit plus at most a check interval or two, never Node's old 300 s.
      expect(lived).to.be.within(900, 5_000);
    } finally {
      clearInterval(trickle);
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('defaults to a 25 s request timeout (20 s for headers), checked every 2 s', () => {
    const server = createHttpServer(app([demoRouter()]));
    expect([server.requestTimeout, server.headersTimeout]).to.deep.equal([25_000, 20_000]);
  });
});
