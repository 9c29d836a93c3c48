import { expect } from 'chai';
import request from 'supertest';
import { Metrics, RateLimit } from '../src/index.js';
import { app, demoRouter } from './helpers.js';

describe('Metrics', () => {
  it('records request durations by route pattern and status, and 429 refusals by code, and serves them on a port of its own', async () => {
    const metrics = new Metrics({ defaultMetrics: true, labels: { instance: 'test-1' } });
    const limit = new RateLimit({ keyPrefix: `m${process.hrtime.bigint()}`, points: 1, durationSeconds: 60 });
    const server = app([demoRouter()], { metrics, authLimiter: limit.middleware() });
    await request(server).get('/api/v1/ping').expect(200);
    await request(server).get('/api/v1/ping').expect(200);
    await request(server).get('/api/v1/auth/x');
    await request(server).get('/api/v1/auth/x').expect(429);
    metrics.gauge('outbox_depth', 'mail waiting', () => 7);
    const metricsServer = await metrics.serve(0, '127.0.0.1');
    try {
      const port = (metricsServer.address() as { port: number }).port;
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).to.equal(200);
      const text = await res.text();
      expect(text).to.match(/http_request_duration_seconds_count\{instance="test-1",method="GET",route="GET \/api\/v1\/ping",status="200"\} 2/);
      expect(text).to.match(/http_requests_refused_total\{code="rate_limited",instance="test-1"\} 1/);
      expect(text).to.match(/outbox_depth\{instance="test-1"\} 7/);
      expect(text).to.contain('nodejs_eventloop_lag_p99_seconds');
      expect(text).to.contain('process_resident_memory_bytes');
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).to.equal(404);
    } finally {
      metricsServer.close();
    }
  });

  it('sends Connection: close on every answer while the instance drains', async () => {
    let draining = false;
    const server = app([demoRouter()], { draining: () => draining });
    expect((await request(server).get('/api/v1/ping').set('Connection', 'keep-alive')).headers.connection).to.not.equal('close');
    draining = true;
    expect((await request(server).get('/api/v1/ping').set('Connection', 'keep-alive')).headers.connection).to.equal('close');
    expect((await request(server).get('/nowhere').set('Connection', 'keep-alive')).headers.connection).to.equal('close');
  });
});
