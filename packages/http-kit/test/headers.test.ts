import { expect } from 'chai';
import request from 'supertest';
import { app, demoRouter } from './helpers.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('headers on every response', () => {
  const server = app([demoRouter()]);

  for (const [name, send] of [
    ['a 200', () => request(server).get('/api/v1/ping')],
    ['an unknown route', () => request(server).get('/api/v1/nowhere')],
    ['a wrong method', () => request(server).delete('/api/v1/ping')],
    ['broken JSON', () => request(server).post('/api/v1/things').set('Content-Type', 'application/json').send('{"name":')],
    ['a NUL in the body', () => request(server).post('/api/v1/things').send({ name: 'a\u0000b' })],
    [
      'an over-large body',
      () =>
        request(server)
          .post('/api/v1/things')
          .send({ name: 'x', note: 'y'.repeat(70_000) }),
    ],
    ['a thrown error', () => request(server).get('/api/v1/boom')],
  ] as const) {
    it(`carries X-Trace-Id and Server-Timing on ${name}`, async () => {
      const res = await send();
      expect(res.headers['x-trace-id']).to.match(/^[0-9a-f]{32}$/);
      expect(res.headers['server-timing']).to.match(/^total;dur=[\d.]+, db;dur=[\d.]+;desc="\d+ queries"/);
      expect(res.headers['x-diagnostics']).to.equal(undefined);
      if (res.status >= 400) expect(res.body.traceId).to.equal(res.headers['x-trace-id']);
    });
  }

  it('takes the trace id from a valid traceparent', async () => {
    const res = await request(server).get('/api/v1/ping').set('traceparent', `00-${TRACE}-00f067aa0ba902b7-01`);
    expect(res.headers['x-trace-id']).to.equal(TRACE);
  });

  it('makes a fresh trace id when the traceparent is not valid', async () => {
    for (const bad of [
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `ff-${TRACE}-00f067aa0ba902b7-01`,
      `00-${TRACE}-0000000000000000-01`,
      `00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`,
      'garbage',
      `00-${TRACE}-00f067aa0ba902b7-01-extra`,
    ]) {
      const res = await request(server).get('/api/v1/ping').set('traceparent', bad);
      expect(res.headers['x-trace-id'])
        .to.match(/^[0-9a-f]{32}$/)
        .and.not.equal(TRACE);
    }
  });

  it('gives each request its own trace id', async () => {
    const a = await request(server).get('/api/v1/ping');
    const b = await request(server).get('/api/v1/ping');
    expect(a.headers['x-trace-id']).to.not.equal(b.headers['x-trace-id']);
  });

  it('says "0 queries" for a request that needs none', async () => {
    const res = await request(server).get('/api/v1/ping');
    expect(res.headers['server-timing']).to.contain('db;dur=0;desc="0 queries"');
  });

  it('adds X-Diagnostics as one-line JSON when asked by header', async () => {
    const res = await request(server).get('/api/v1/ping').set('X-Diagnostics', '1');
    const d = JSON.parse(res.headers['x-diagnostics'] ?? '{}');
    expect(d).to.have.keys('traceId', 'totalMs', 'db', 'steps');
    expect(d.traceId).to.equal(res.headers['x-trace-id']);
    expect(d.db).to.deep.equal({ ms: 0, queries: 0 });
    expect(d.steps).to.deep.equal([]);
    expect(d.totalMs).to.be.a('number');
  });

  it('tells the same total in X-Diagnostics and Server-Timing', async () => {
    const res = await request(server).get('/api/v1/ping').set('X-Diagnostics', '1');
    const total = Number(/total;dur=([\d.]+)/.exec(res.headers['server-timing'] ?? '')![1]);
    expect(JSON.parse(res.headers['x-diagnostics'] ?? '{}').totalMs).to.equal(total);
  });

  it('adds X-Diagnostics when asked by ?diagnostics=1, on errors too', async () => {
    const res = await request(server).get('/api/v1/nowhere?diagnostics=1');
    expect(res.status).to.equal(404);
    expect(JSON.parse(res.headers['x-diagnostics'] ?? '{}').traceId).to.equal(res.body.traceId);
  });

  it('does not add X-Diagnostics for other values', async () => {
    const res = await request(server).get('/api/v1/ping?diagnostics=0').set('X-Diagnostics', 'yes');
    expect(res.headers['x-diagnostics']).to.equal(undefined);
  });
});

describe('requests Node refuses before Express', () => {
  it('answers a request line over 16 kB with 431 problem+json and a trace id', async () => {
    const { createHttpServer } = await import('../src/index.js');
    const server = createHttpServer(app([demoRouter()]));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/ping?q=${'x'.repeat(20_000)}`);
      expect(res.status).to.equal(431);
      expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
      const body = (await res.json()) as { code: string; status: number };
      expect(body).to.include({ code: 'request_too_large', status: 431 });
      expect(res.headers.get('x-trace-id')).to.match(/^[0-9a-f]{32}$/);
    } finally {
      server.close();
    }
  });
});

describe('Server-Timing is written as the head goes out', () => {
  it('once, whether the handler ends the answer or writes the head itself with headers of its own, and for a plain Express app through on-headers', async () => {
    const { createHttpApp, ApiRouter, createLogger } = await import('../src/index.js');
    const { requestContext } = await import('../src/middleware.js');
    const express = (await import('express')).default;
    const api = new ApiRouter();
    api.route({ method: 'get', path: '/api/v1/raw', operationId: 'raw', summary: 'raw', responses: { 201: { description: 'raw' } } }, (_req, res) => {
      res.writeHead(201, { 'X-Own': 'yes', 'Content-Type': 'text/plain' });
      res.end('raw');
    });
    const hooked = createHttpApp({ logger: createLogger({ level: 'silent' }), allowedOrigins: [], routers: [api] });
    const raw = await request(hooked).get('/api/v1/raw').set('X-Diagnostics', '1');
    expect(raw.status).to.equal(201);
    expect(raw.headers['x-own']).to.equal('yes');
    expect(raw.headers['server-timing']).to.match(/^total;dur=[\d.]+, db;dur=[\d.]+;desc="0 queries"$/);
    expect(JSON.parse(raw.headers['x-diagnostics']!).db.queries).to.equal(0);
    // A plain Express app (no createHttpApp): requestContext alone still writes them.
    const plain = express();
    plain.use(requestContext());
    plain.get('/x', (_req, res) => {
      res.json({ ok: true });
    });
    const res = await request(plain).get('/x');
    expect(res.headers['server-timing']).to.match(/^total;dur=[\d.]+, db;dur=[\d.]+;desc="0 queries"$/);
    expect(res.headers['x-trace-id']).to.match(/^[0-9a-f]{32}$/);
  });
});

describe('two Authorization headers (issue 47)', () => {
  it('are refused with 400 problem+json, not judged by the first; one, in any letter case, passes', async () => {
    const http = await import('node:http');
    const server = app([demoRouter()]).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const send = (headers: Record<string, string | string[]>) =>
      new Promise<{ status: number; type: string | undefined; body: string }>((resolve, reject) => {
        const req = http.request({ port, host: '127.0.0.1', path: '/api/v1/ping', headers }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => {
            body += c.toString('utf8');
          });
          res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      const two = await send({ Authorization: ['Bearer mp_pat_first', 'Bearer mp_pat_second'] });
      expect(two.status).to.equal(400);
      expect(two.type).to.match(/application\/problem\+json/);
      expect(JSON.parse(two.body).code).to.equal('validation_failed');
      expect((await send({ authorization: 'Bearer x' })).status).to.equal(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
