import { expect } from 'chai';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { connectTestRedis } from '../../test-support/src/index.js';
import { RateLimit, TooManyRequestsError } from '../src/index.js';
import { app, demoRouter } from './helpers.js';

describe('RateLimit', () => {
  it('answers 429 rate_limited with Retry-After in seconds past the ceiling', async () => {
    const limit = new RateLimit({ keyPrefix: `t${Date.now()}`, points: 3, durationSeconds: 60 });
    const server = app([demoRouter()], { authLimiter: limit.middleware() });
    // the limiter sits on /api/v1/auth only
    for (let i = 0; i < 5; i++) expect((await request(server).get('/api/v1/ping')).status).to.equal(200);
    const statuses: number[] = [];
    let last: request.Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await request(server).get('/api/v1/auth/anything');
      statuses.push(last.status);
    }
    expect(statuses).to.deep.equal([404, 404, 404, 429]);
    expect(last!.body.code).to.equal('rate_limited');
    expect(Number(last!.headers['retry-after'])).to.be.within(1, 60);
  });

  it('tells the client its budget with RateLimit-Policy and RateLimit on every answer, the 429 included', async () => {
    const limit = new RateLimit({ keyPrefix: `h${Date.now()}`, points: 2, durationSeconds: 60 });
    const server = app([demoRouter()], { authLimiter: limit.middleware() });
    const first = await request(server).get('/api/v1/auth/anything');
    expect(first.headers['ratelimit-policy']).to.match(/^"h\d+";q=2;w=60$/);
    expect(first.headers.ratelimit).to.match(/^"h\d+";r=1;t=(60|59)$/);
    expect((await request(server).get('/api/v1/auth/anything')).headers.ratelimit).to.match(/;r=0;/);
    const refused = await request(server).get('/api/v1/auth/anything');
    expect(refused.status).to.equal(429);
    expect(refused.headers['ratelimit-policy']).to.match(/;q=2;w=60$/);
    expect(refused.headers.ratelimit).to.match(/;r=0;t=\d+$/);
    expect(refused.headers['retry-after']).to.match(/^\d+$/);
  });

  it('keeps separate counters per key', async () => {
    const limit = new RateLimit({ keyPrefix: `k${Date.now()}`, points: 1, durationSeconds: 60 });
    await limit.consume('a');
    await limit.consume('b');
    let err: unknown;
    await limit.consume('a').catch((e) => {
      err = e;
    });
    expect(err).to.be.instanceOf(TooManyRequestsError);
  });

  describe('with Redis', () => {
    let redis: Redis | undefined;
    before(async function () {
      redis = await connectTestRedis();
      if (!redis) {
        this.skip();
      }
    });
    after(() => redis?.disconnect());

    it('shares one ceiling between instances', async () => {
      const prefix = `shared${Date.now()}`;
      const a = new RateLimit({ keyPrefix: prefix, points: 4, durationSeconds: 60, redis });
      const b = new RateLimit({ keyPrefix: prefix, points: 4, durationSeconds: 60, redis });
      await a.consume('ip');
      await b.consume('ip');
      await a.consume('ip');
      await b.consume('ip');
      const refused = await a.consume('ip').then(
        () => false,
        (e) => e instanceof TooManyRequestsError,
      );
      expect(refused).to.equal(true);
      await a.reset('ip');
      await b.consume('ip');
    });
  });
});
