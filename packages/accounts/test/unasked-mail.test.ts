/**
 * Issue 18, row 11: unasked mail is limited per recipient address and per client IP, across
 * instances (counted in PostgreSQL), silently: the answer never changes when a mail is dropped.
 */

import { Metrics } from '@svc/http-kit';
import { expect } from 'chai';
import request from 'supertest';
import { UNASKED_MAIL_LIMITS } from '../src/service.js';
import { createWorld, mailsTo, PASSWORD, signedUp, type World } from './helpers.js';

describe('unasked mail limited per recipient and per IP (issue 18 row 11)', function () {
  this.timeout(60_000);
  let w: World;
  let apps: import('express').Express[];
  before(async () => {
    w = await createWorld();
    // Two instances behind a trusted proxy, so each request can come from an IP of its own.
    apps = [w.another().app, w.another().app];
    for (const app of apps) app.set('trust proxy', true);
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  const from = (i: number) => request(apps[i % 2]!);
  const ip = (i: number) => `198.51.100.${i + 1}`;
  const { perRecipient, perIp } = UNASKED_MAIL_LIMITS;

  it(`"you already have an account" from twenty IPs over two instances: at most ${perRecipient} mails an hour, every answer the same`, async () => {
    await signedUp(w, 'ada@example.test'); // its confirmation counts as the first mail to the address
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        from(i).post('/api/v1/auth/register').set('X-Forwarded-For', ip(i)).send({ email: 'ada@example.test', password: PASSWORD, displayName: 'Someone' }),
      ),
    );
    for (const r of answers) {
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({});
    }
    await w.deliver();
    expect(mailsTo(w, 'ada@example.test', /already have an account/i)).to.have.length(perRecipient - 1);
    // An hour later the address may be told again.
    w.clock.advanceSeconds(3600);
    await from(0)
      .post('/api/v1/auth/register')
      .set('X-Forwarded-For', ip(99))
      .send({ email: 'ada@example.test', password: PASSWORD, displayName: 'x' })
      .expect(200);
    await w.deliver();
    expect(mailsTo(w, 'ada@example.test', /already have an account/i)).to.have.length(perRecipient);
  });

  it(`forgot-password from many IPs, past the five-minute window each time: at most ${perRecipient} reset mails an hour, always 204`, async () => {
    await signedUp(w, 'ada@example.test');
    await w.deliver();
    w.smtp.clear();
    for (let i = 0; i < 10; i++) {
      w.clock.advanceSeconds(301);
      await from(i).post('/api/v1/auth/forgot-password').set('X-Forwarded-For', ip(i)).send({ email: 'ada@example.test' }).expect(204);
    }
    await w.deliver();
    // All within the hour that began with the sign-up's confirmation mail, which counted first.
    expect(mailsTo(w, 'ada@example.test', /reset your password/i)).to.have.length(perRecipient - 1);
  });

  it(`40 different people behind one shared IP each get their reset link (the per-IP limit, ${perIp} by default, counts distinct addresses), in parallel`, async () => {
    expect(perIp).to.be.above(40);
    const emails = Array.from({ length: 40 }, (_, i) => `person${i}@example.test`);
    for (const email of emails) await signedUp(w, email);
    await w.deliver();
    w.smtp.clear();
    w.clock.advanceSeconds(3600);
    const answers = await Promise.all(
      emails.map((email, i) => from(i).post('/api/v1/auth/forgot-password').set('X-Forwarded-For', '203.0.113.9').send({ email })),
    );
    for (const r of answers) expect(r.status).to.equal(204);
    await w.deliver();
    expect(new Set(w.smtp.mails.flatMap((m) => m.to))).to.deep.equal(new Set(emails));
    expect(w.logLines.filter((l) => l.msg === 'unasked mail limit reached; mail dropped')).to.deep.equal([]);
  });

  it('UNASKED_MAIL_PER_IP = 10: one IP spraying 11 distinct addresses in parallel gets 10 mails out; the 11th is dropped, logged without the address and counted', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const limited = [w.another({ unaskedMailPerIp: 10 }, { metrics }).app, w.another({ unaskedMailPerIp: 10 }, { metrics }).app];
    for (const app of limited) app.set('trust proxy', true);
    const emails = Array.from({ length: 11 }, (_, i) => `person${i}@example.test`);
    for (const email of emails) await signedUp(w, email);
    await w.deliver();
    w.smtp.clear();
    w.logLines.length = 0;
    w.clock.advanceSeconds(3600);
    // The first person asks three times (one address, however often, is one of the ten).
    for (let i = 0; i < 3; i++) {
      await request(limited[0]!)
        .post('/api/v1/auth/register')
        .set('X-Forwarded-For', '203.0.113.9')
        .send({ email: emails[0], password: PASSWORD, displayName: 'P' })
        .expect(200);
    }
    const answers = await Promise.all(
      emails.map((email, i) =>
        request(limited[i % 2]!)
          .post('/api/v1/auth/forgot-password')
          .set('X-Forwarded-For', '203.0.113.9')
          .send({ email }),
      ),
    );
    for (const r of answers) expect(r.status).to.equal(204);
    await w.deliver();
    const reached = new Set(w.smtp.mails.flatMap((m) => m.to));
    expect(reached.size).to.equal(10);
    expect(reached.has(emails[0]!)).to.equal(true);
    expect(w.smtp.mails.filter((m) => /already have an account/i.test(m.subject))).to.have.length(3);
    const drops = w.logLines.filter((l) => l.msg === 'unasked mail limit reached; mail dropped');
    expect(drops).to.have.length(1);
    expect(drops[0]).to.include({ kind: 'reset_password', limit: 'ip', domain: 'example.test' });
    expect(JSON.stringify(drops)).to.not.match(/person\d+@/);
    const counted = (await metrics.unaskedMailDropped.get()).values;
    expect(counted).to.deep.equal([{ labels: { kind: 'reset_password', limit: 'ip' }, value: 1 }]);
  });

  it('UNASKED_MAIL_PER_ADDRESS is configurable (2 an hour)', async () => {
    const app = w.another({ unaskedMailPerAddress: 2 }).app;
    await signedUp(w, 'ada@example.test'); // the confirmation counts first
    w.smtp.clear();
    for (let i = 0; i < 4; i++)
      await request(app).post('/api/v1/auth/register').send({ email: 'ada@example.test', password: PASSWORD, displayName: 'x' }).expect(200);
    await w.deliver();
    expect(mailsTo(w, 'ada@example.test', /already have an account/i)).to.have.length(1);
  });

  it('resend-confirmation counts toward the address too (no answer changes)', async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    for (let i = 0; i < perRecipient + 2; i++) {
      w.clock.advanceSeconds(301);
      await agent.post('/api/v1/auth/resend-confirmation').expect(204);
    }
    await w.deliver();
    // Seven resends plus the sign-up's mail within 40 minutes: five went out in all.
    expect(mailsTo(w, 'ada@example.test', /confirm your e-mail/i)).to.have.length(perRecipient);
  });
});
