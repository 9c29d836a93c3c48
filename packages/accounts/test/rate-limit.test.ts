import { expect } from 'chai';
import { Redis } from 'ioredis';
import request from 'supertest';
import { createWorld, type World } from './helpers.js';

describe('the per-client-IP limit on /api/v1/auth/*', () => {
  let w: World;
  before(async () => {
    w = await createWorld({ config: { authRateLimit: 3, authRateWindowSeconds: 60 } });
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('answers 429 rate_limited with Retry-After seconds past the ceiling, counted across every auth operation', async () => {
    const { app } = w.another();
    await request(app).post('/api/v1/auth/forgot-password').send({ email: 'a@example.test' }).expect(204);
    await request(app).post('/api/v1/auth/login').send({ email: 'a@example.test', password: 'whatever1' }).expect(401);
    await request(app).post('/api/v1/auth/confirm-email').send({}).expect(400);
    const res = await request(app).post('/api/v1/auth/register').send({ email: 'a@example.test', password: 'whatever1', displayName: 'A' });
    expect(res.status).to.equal(429);
    expect(res.body.code).to.equal('rate_limited');
    expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
    // Other operations are not limited by it.
    expect((await request(app).get('/api/v1/me')).status).to.equal(401);
  });

  it('keys by the client IP from X-Forwarded-For only when the proxy is trusted', async () => {
    const trusted = w.another();
    trusted.app.set('trust proxy', true);
    for (let i = 0; i < 3; i++)
      await request(trusted.app).post('/api/v1/auth/forgot-password').set('X-Forwarded-For', '203.0.113.1').send({ email: 'a@example.test' }).expect(204);
    expect(
      (await request(trusted.app).post('/api/v1/auth/forgot-password').set('X-Forwarded-For', '203.0.113.1').send({ email: 'a@example.test' })).status,
    ).to.equal(429);
    expect(
      (await request(trusted.app).post('/api/v1/auth/forgot-password').set('X-Forwarded-For', '203.0.113.2').send({ email: 'a@example.test' })).status,
    ).to.equal(204);

    const untrusted = w.another();
    for (let i = 0; i < 3; i++)
      await request(untrusted.app).post('/api/v1/auth/forgot-password').set('X-Forwarded-For', `198.51.100.${i}`).send({ email: 'a@example.test' }).expect(204);
    expect(
      (await request(untrusted.app).post('/api/v1/auth/forgot-password').set('X-Forwarded-For', '198.51.100.9').send({ email: 'a@example.test' })).status,
    ).to.equal(429);
  });

  it('shares the counters between instances through Redis', async function () {
    const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    try {
      await redis.connect();
    } catch {
      redis.disconnect();
      this.skip();
    }
    try {
      const ip = `192.0.2.${Math.floor(Math.random() * 250)}`;
      await redis.del(`auth:${ip}`);
      const one = w.another({}, { redis });
      const two = w.another({}, { redis });
      one.app.set('trust proxy', true);
      two.app.set('trust proxy', true);
      const send = (app: typeof one.app) => request(app).post('/api/v1/auth/forgot-password').set('X-Forwarded-For', ip).send({ email: 'a@example.test' });
      expect((await send(one.app)).status).to.equal(204);
      expect((await send(two.app)).status).to.equal(204);
      expect((await send(one.app)).status).to.equal(204);
      expect((await send(two.app)).status).to.equal(429);
      await redis.del(`auth:${ip}`);
    } finally {
      redis.disconnect();
    }
  });
});
