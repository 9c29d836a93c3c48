/**
 * Issue 18, rows 1 and 2: password guesses in parallel. Real concurrent HTTP requests against real
 * PostgreSQL, through listening servers (two instances on one database), repeated so that a race
 * that only sometimes loses shows up in CI.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createWorld, linkIn, mailsTo, PASSWORD, register, signedUp, type World } from './helpers.js';

const MAX = 5;
/** Rounds of each core race (RACE_ROUNDS overrides; CI runs the default). */
const ROUNDS = Number(process.env.RACE_ROUNDS ?? 20);

async function listen(app: Express): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function tally(answers: request.Response[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of answers) {
    const key = `${r.status}${r.body?.code ? ` ${r.body.code}` : ''}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

describe('lockout under parallel requests (issue 18 rows 1 and 2)', function () {
  this.timeout(180_000);
  let w: World;
  let one: { url: string; close(): Promise<void> };
  let two: { url: string; close(): Promise<void> };
  before(async () => {
    w = await createWorld({ config: { lockoutMaxFailures: MAX, lockoutSeconds: 300 } });
    one = await listen(w.app);
    two = await listen(w.another().app);
  });
  after(async () => {
    await one.close();
    await two.close();
    await w.close();
  });
  beforeEach(async () => w.reset());

  const loginAt = (url: string, email: string, password: string) => request(url).post('/api/v1/auth/login').send({ email, password });

  it(`150 parallel wrong logins, split over two instances: exactly ${MAX} are checked (401), the rest 423 — ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const email = `ada${round}@example.test`;
      await register(request(w.app), email);
      const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => loginAt(i % 2 ? one.url : two.url, email, `wrong password ${i}`)));
      expect(tally(answers), `round ${round}`).to.deep.equal({ '401 invalid_credentials': MAX, '423 account_locked': 150 - MAX });
    }
  });

  it('an unknown address walks the same path: of 150 parallel attempts exactly five are checked, the rest 423', async () => {
    const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => loginAt(i % 2 ? one.url : two.url, 'nobody@example.test', `guess ${i}`)));
    expect(tally(answers)).to.deep.equal({ '401 invalid_credentials': MAX, '423 account_locked': 150 - MAX });
  });

  it(`the right password inside a burst of 50 wrong ones: at most ${MAX} passwords are checked, and once locked the right one is refused too — ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const email = `grace${round}@example.test`;
      await register(request(w.app), email);
      const burst = Array.from({ length: 51 }, (_, i) => (i === 25 ? PASSWORD : `wrong password ${i}`));
      const answers = await Promise.all(burst.map((password, i) => loginAt(i % 2 ? one.url : two.url, email, password)));
      const counts = tally(answers);
      // Checked = answered 401 or 200; never more than the maximum, and all the rest are 423.
      const checked = (counts['401 invalid_credentials'] ?? 0) + (counts['200'] ?? 0);
      expect(checked, `round ${round}: ${JSON.stringify(counts)}`).to.be.at.most(MAX);
      expect(counts['423 account_locked'], `round ${round}`).to.equal(51 - checked);
      // The right password was either one of the checked ones (200) or refused by the lock (423).
      expect([200, 423], `round ${round}`).to.include(answers[25]!.status);
    }
  });

  it('while locked the right password is refused (423), on every instance, until the lock runs out; the lock is not extended by attempts during it', async () => {
    await register(request(w.app), 'ada@example.test');
    for (let i = 0; i < MAX; i++) expect((await loginAt(one.url, 'ada@example.test', `wrong ${i}`)).status).to.equal(401);
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => loginAt(i % 2 ? one.url : two.url, 'ada@example.test', PASSWORD)));
    expect(tally(burst)).to.deep.equal({ '423 account_locked': 20 });
    w.clock.advanceSeconds(299);
    expect((await loginAt(two.url, 'ada@example.test', PASSWORD)).status).to.equal(423);
    w.clock.advanceSeconds(1);
    expect((await loginAt(two.url, 'ada@example.test', PASSWORD)).status).to.equal(200);
  });

  it('a new window after the lock: again exactly five are checked', async () => {
    await register(request(w.app), 'ada@example.test');
    await Promise.all(Array.from({ length: 30 }, (_, i) => loginAt(one.url, 'ada@example.test', `wrong ${i}`)));
    w.clock.advanceSeconds(300);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => loginAt(i % 2 ? one.url : two.url, 'ada@example.test', `wrong again ${i}`)));
    expect(tally(answers)).to.deep.equal({ '401 invalid_credentials': MAX, '423 account_locked': 30 - MAX });
  });

  it('a right password gives its place back: wrong ones in a row are counted from there, and the fifth in a row may be right', async () => {
    await register(request(w.app), 'ada@example.test');
    for (let i = 0; i < MAX - 1; i++) expect((await loginAt(one.url, 'ada@example.test', `wrong ${i}`)).status).to.equal(401);
    // The fifth attempt reaches the maximum and is still checked: right, it signs in and lifts the lock it started.
    expect((await loginAt(one.url, 'ada@example.test', PASSWORD)).status).to.equal(200);
    for (let i = 0; i < MAX - 1; i++) expect((await loginAt(one.url, 'ada@example.test', `wrong ${i}`)).status).to.equal(401);
    expect((await loginAt(one.url, 'ada@example.test', PASSWORD)).status).to.equal(200);
  });

  it(`change-password: 40 parallel wrong current passwords, exactly ${MAX} checked (400 wrong_current_password), the rest 423; the count is the login's`, async () => {
    const { agent } = await signedUp(w, 'ada@example.test');
    const cookie = (await agent.get('/api/v1/me')).request.cookies;
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        request(i % 2 ? one.url : two.url)
          .post('/api/v1/me/password')
          .set('Cookie', cookie)
          .send({ currentPassword: `wrong ${i}`, newPassword: 'a brand new password' }),
      ),
    );
    expect(tally(answers)).to.deep.equal({ '400 wrong_current_password': MAX, '423 account_locked': 40 - MAX });
    // Locked for login too, and the right current password is refused while the lock runs.
    expect((await loginAt(one.url, 'ada@example.test', PASSWORD)).status).to.equal(423);
    const right = await request(one.url)
      .post('/api/v1/me/password')
      .set('Cookie', cookie)
      .send({ currentPassword: PASSWORD, newPassword: 'a brand new password' });
    expect([right.status, right.body.code]).to.deep.equal([423, 'account_locked']);
    w.clock.advanceSeconds(300);
    await request(one.url)
      .post('/api/v1/me/password')
      .set('Cookie', cookie)
      .send({ currentPassword: PASSWORD, newPassword: 'a brand new password' })
      .expect(204);
  });

  it('a password reset lifts the lock', async () => {
    await register(request(w.app), 'ada@example.test');
    await Promise.all(Array.from({ length: 10 }, (_, i) => loginAt(one.url, 'ada@example.test', `wrong ${i}`)));
    expect((await loginAt(one.url, 'ada@example.test', PASSWORD)).status).to.equal(423);
    await request(w.app).post('/api/v1/auth/forgot-password').send({ email: 'ada@example.test' }).expect(204);
    await w.deliver();
    const { params } = linkIn(mailsTo(w, 'ada@example.test', /reset your password/i)[0]!);
    await request(w.app)
      .post('/api/v1/auth/reset-password')
      .send({ ...params, newPassword: 'reset and unlocked' })
      .expect(204);
    expect((await loginAt(two.url, 'ada@example.test', 'reset and unlocked')).status).to.equal(200);
  });
});
