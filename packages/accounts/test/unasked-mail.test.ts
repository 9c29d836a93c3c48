/**
 * Issue 18, row 11: unasked mail is limited per recipient address and per client IP, across
 * instances (counted in PostgreSQL), silently: the answer never changes when a mail is dropped.
 */
import { expect } from 'chai';
import request from 'supertest';
import { UNASKED_MAIL_LIMITS } from '../src/index.js';
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

  it(`one IP asking for mail to many addresses: at most ${perIp} an hour`, async () => {
    const emails = Array.from({ length: perIp + 5 }, (_, i) => `person${i}@example.test`);
    for (const email of emails) await signedUp(w, email);
    await w.deliver();
    w.smtp.clear();
    w.clock.advanceSeconds(3600);
    for (const [i, email] of emails.entries())
      await from(i).post('/api/v1/auth/forgot-password').set('X-Forwarded-For', '203.0.113.9').send({ email }).expect(204);
    await w.deliver();
    expect(w.smtp.mails).to.have.length(perIp);
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
