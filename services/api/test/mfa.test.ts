/**
 * TOTP across the composed service (decisions.md §8 "Stronger sign-in"): enrolment, the second step
 * of a login, recovery codes, replayed codes and the lockout under parallel wrong codes, with two
 * instances on one database where it matters. Time is the harness's manual clock.
 */
import { createLogger } from '@svc/http-kit';
import { totpCode } from '@svc/sign-in-factors';
import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../src/config.js';
import { buildService, type Service } from '../src/service.js';
import { type Harness, linkTo, signUp, startHarness } from './harness.js';

const PASSWORD = 'correct horse battery';

describe('TOTP and recovery codes', function () {
  this.timeout(120_000);
  let h: Harness;
  let second: Service | undefined;

  beforeEach(async () => {
    h = await startHarness({ AUTH_RATE_LIMIT: '1000000' });
  });
  afterEach(async () => {
    await second?.close();
    second = undefined;
    await h?.close();
  });

  /** A second instance on the same database, secret and clock. */
  async function secondInstance(): Promise<Service> {
    const config = loadConfig({
      DATA_DIR: h.dataDir,
      SMTP_URL: h.smtp.url,
      PASSWORD_BREACH_API: 'off',
      PUBLIC_BASE_URL: 'http://localhost:8080',
      AUTH_RATE_LIMIT: '1000000',
    });
    second = await buildService({ config, knex: h.db.knex, logger: createLogger({ level: 'silent' }), clock: h.clock, startMailer: false });
    return second;
  }

  /** Signs up and turns TOTP on; answers the secret and the recovery codes. */
  async function enrol(email: string): Promise<{ agent: request.Agent; secret: string; recoveryCodes: string[] }> {
    const agent = await signUp(h.app, email);
    const start = await agent.post('/api/v1/me/mfa/totp').send({});
    expect(start.status, JSON.stringify(start.body)).to.equal(201);
    const secret = start.body.secret as string;
    expect(start.body.otpauthUrl).to.match(/^otpauth:\/\/totp\/.*secret=/);
    const confirm = await agent.post('/api/v1/me/mfa/totp/confirm').send({ code: totpCode(secret, h.clock.now()) });
    expect(confirm.status, JSON.stringify(confirm.body)).to.equal(200);
    return { agent, secret, recoveryCodes: confirm.body.recoveryCodes };
  }

  async function passwordStep(app: Service['app'], email: string): Promise<string> {
    const res = await request(app).post('/api/v1/auth/login').send({ email, password: PASSWORD });
    expect(res.status, JSON.stringify(res.body)).to.equal(401);
    expect(res.body.code).to.equal('mfa_required');
    expect(res.headers['set-cookie'] ?? []).to.deep.equal([]);
    return res.body.mfaToken as string;
  }

  it('enrols: pending until a right code, ten recovery codes, a notice, 409 while on, and /me/logins says so', async () => {
    const agent = await signUp(h.app, 'ada@example.test');
    const first = await agent.post('/api/v1/me/mfa/totp').send({});
    const again = await agent.post('/api/v1/me/mfa/totp').send({});
    expect(again.status).to.equal(201);
    expect(again.body.secret).to.not.equal(first.body.secret); // a second POST while pending: a new secret
    // Still pending: a login needs no second step.
    expect((await request(h.app).post('/api/v1/auth/login').send({ email: 'ada@example.test', password: PASSWORD })).status).to.equal(200);
    // The first secret no longer confirms.
    const stale = await agent.post('/api/v1/me/mfa/totp/confirm').send({ code: totpCode(first.body.secret, h.clock.now()) });
    expect(stale.status).to.equal(400);
    expect(stale.body.code).to.equal('invalid_code');
    const ok = await agent.post('/api/v1/me/mfa/totp/confirm').send({ code: totpCode(again.body.secret, h.clock.now()) });
    expect(ok.status).to.equal(200);
    expect(ok.body.recoveryCodes).to.have.length(10);
    expect(new Set(ok.body.recoveryCodes).size).to.equal(10);
    const conflict = await agent.post('/api/v1/me/mfa/totp').send({});
    expect(conflict.status).to.equal(409);
    expect(conflict.body.code).to.equal('mfa_already_enabled');
    const logins = await agent.get('/api/v1/me/logins');
    expect(logins.body).to.include({ hasPassword: true, totp: true, passkeys: 0 });
    const mails = await h.mailsTo('ada@example.test');
    expect(mails.map((m) => m.subject)).to.include('Two-step sign-in was turned on');
    // The secret is sealed at rest: its base32 text is nowhere in the row.
    const row = await h.db.knex('mfa_totp').first();
    expect(Buffer.from(row.secretSealed).toString('utf8')).to.not.include(again.body.secret);
    const codes = await h.db.knex('mfa_recovery_codes').select('codeHash');
    expect(codes).to.have.length(10);
    for (const c of ok.body.recoveryCodes as string[]) expect(JSON.stringify(codes)).to.not.include(c);
  });

  it('a login with TOTP on: 401 mfa_required with an mfaToken and no session; a wrong code keeps the token; a right one signs in once', async () => {
    const { secret } = await enrol('bo@example.test');
    h.clock.advance(60_000);
    const mfaToken = await passwordStep(h.app, 'bo@example.test');
    const client = request.agent(h.app);
    expect((await client.get('/api/v1/me')).status).to.equal(401);
    const wrong = await client.post('/api/v1/auth/mfa').send({ mfaToken, code: '000000' === totpCode(secret, h.clock.now()) ? '111111' : '000000' });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.code).to.equal('invalid_code');
    const right = await client.post('/api/v1/auth/mfa').send({ mfaToken, code: totpCode(secret, h.clock.now()) });
    expect(right.status, JSON.stringify(right.body)).to.equal(200);
    expect(right.body.user.email).to.equal('bo@example.test');
    expect(right.headers['set-cookie']?.[0]).to.match(/^service_session=/);
    const sessions = await client.get('/api/v1/me/sessions');
    expect(sessions.body.items.find((s: { current: boolean }) => s.current).method).to.equal('password');
    // The token is spent.
    h.clock.advance(30_000);
    const replay = await request(h.app)
      .post('/api/v1/auth/mfa')
      .send({ mfaToken, code: totpCode(secret, h.clock.now()) });
    expect(replay.status).to.equal(401);
    expect(replay.body.code).to.equal('invalid_credentials');
  });

  it('an mfaToken lives five minutes', async () => {
    const { secret } = await enrol('cy@example.test');
    h.clock.advance(60_000);
    const mfaToken = await passwordStep(h.app, 'cy@example.test');
    h.clock.advance(5 * 60_000 + 1);
    const late = await request(h.app)
      .post('/api/v1/auth/mfa')
      .send({ mfaToken, code: totpCode(secret, h.clock.now()) });
    expect(late.status).to.equal(401);
    expect(late.body.code).to.equal('invalid_credentials');
  });

  // Four at once: a replayed code is a wrong code and counts toward the lockout (five would lock).
  it('a code is accepted once: replayed on a second instance, and in parallel on both, it signs in once', async () => {
    const { secret } = await enrol('di@example.test');
    const other = await secondInstance();
    h.clock.advance(60_000);
    const code = totpCode(secret, h.clock.now());
    const tokens = [];
    for (let i = 0; i < 4; i++) tokens.push(await passwordStep(i % 2 ? other.app : h.app, 'di@example.test'));
    const answers = await Promise.all(
      tokens.map((mfaToken, i) =>
        request(i % 2 ? other.app : h.app)
          .post('/api/v1/auth/mfa')
          .send({ mfaToken, code }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).to.have.length(1);
    expect(answers.filter((a) => a.status === 400 && a.body.code === 'invalid_code')).to.have.length(3);
    // The enrolment's own code (an earlier step) is refused too, as is any code of a step already used.
    const late = await passwordStep(other.app, 'di@example.test');
    const again = await request(other.app).post('/api/v1/auth/mfa').send({ mfaToken: late, code });
    expect(again.body.code).to.equal('invalid_code');
    // The next step's code works.
    h.clock.advance(30_000);
    const next = await request(other.app)
      .post('/api/v1/auth/mfa')
      .send({ mfaToken: late, code: totpCode(secret, h.clock.now()) });
    expect(next.status).to.equal(200);
  });

  it('a recovery code works once, in parallel on two instances too, and mails a notice', async () => {
    const { recoveryCodes } = await enrol('ed@example.test');
    const other = await secondInstance();
    const tokens = [];
    for (let i = 0; i < 4; i++) tokens.push(await passwordStep(i % 2 ? other.app : h.app, 'ed@example.test'));
    // Typed with upper case and without the dash: the same code.
    const typed = recoveryCodes[0]!.toUpperCase().replace('-', ' ');
    const answers = await Promise.all(
      tokens.map((mfaToken, i) =>
        request(i % 2 ? other.app : h.app)
          .post('/api/v1/auth/mfa')
          .send({ mfaToken, recoveryCode: typed }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 400, 400, 400]);
    const mails = await h.mailsTo('ed@example.test');
    expect(mails.filter((m) => m.subject === 'A recovery code was used')).to.have.length(1);
    // Another code still works.
    const next = await request(h.app)
      .post('/api/v1/auth/mfa')
      .send({ mfaToken: await passwordStep(h.app, 'ed@example.test'), recoveryCode: recoveryCodes[1] });
    expect(next.status).to.equal(200);
  });

  it('wrong codes count toward the login lockout: of 30 parallel wrong codes on two instances at most 5 are checked, then 423 even for the right code', async () => {
    const { secret } = await enrol('fa@example.test');
    const other = await secondInstance();
    h.clock.advance(60_000);
    const mfaToken = await passwordStep(h.app, 'fa@example.test');
    const right = totpCode(secret, h.clock.now());
    const wrongCode = right === '123456' ? '654321' : '123456';
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(i % 2 ? other.app : h.app)
          .post('/api/v1/auth/mfa')
          .send({ mfaToken, code: wrongCode }),
      ),
    );
    const checked = answers.filter((a) => a.status === 400);
    expect(checked.length).to.be.at.most(5);
    expect(answers.filter((a) => a.status === 423).length).to.equal(30 - checked.length);
    const locked = await request(h.app).post('/api/v1/auth/mfa').send({ mfaToken, code: right });
    expect(locked.status).to.equal(423);
    expect(locked.body.code).to.equal('account_locked');
    // And the password too: it is one lockout.
    expect((await request(h.app).post('/api/v1/auth/login').send({ email: 'fa@example.test', password: PASSWORD })).status).to.equal(423);
  });

  it('a right password that gets mfa_required does not reset the count; the completed second step does', async () => {
    const { secret } = await enrol('gu@example.test');
    h.clock.advance(60_000);
    for (let i = 0; i < 4; i++)
      expect((await request(h.app).post('/api/v1/auth/login').send({ email: 'gu@example.test', password: 'wrong password!' })).status).to.equal(401);
    const mfaToken = await passwordStep(h.app, 'gu@example.test');
    // Four failures still count: one wrong code locks.
    const wrong = await request(h.app)
      .post('/api/v1/auth/mfa')
      .send({ mfaToken, code: totpCode(secret, new Date(h.clock.now().getTime() + 3600_000)) });
    expect(wrong.status).to.equal(400);
    expect(
      (
        await request(h.app)
          .post('/api/v1/auth/mfa')
          .send({ mfaToken, code: totpCode(secret, h.clock.now()) })
      ).status,
    ).to.equal(423);
    h.clock.advance(301_000);
    for (let i = 0; i < 4; i++) await request(h.app).post('/api/v1/auth/login').send({ email: 'gu@example.test', password: 'wrong password!' });
    const token2 = await passwordStep(h.app, 'gu@example.test');
    expect(
      (
        await request(h.app)
          .post('/api/v1/auth/mfa')
          .send({ mfaToken: token2, code: totpCode(secret, h.clock.now()) })
      ).status,
    ).to.equal(200);
    // Reset: four more wrong passwords do not lock.
    for (let i = 0; i < 4; i++)
      expect((await request(h.app).post('/api/v1/auth/login').send({ email: 'gu@example.test', password: 'wrong password!' })).status).to.equal(401);
  });

  it('turning TOTP off: the password alone is 401 reauthentication_required, a wrong password beside a code 400 wrong_current_password, a wrong code 400 invalid_code; a right code turns it off with a notice', async () => {
    const { agent, secret } = await enrol('ha@example.test');
    h.clock.advance(60_000);
    // Issue 47: a stolen session that knows the password cannot turn the second factor off.
    const passwordOnly = await agent.delete('/api/v1/me/mfa/totp').send({ password: PASSWORD });
    expect([passwordOnly.status, passwordOnly.body.code]).to.deep.equal([401, 'reauthentication_required']);
    expect((await agent.get('/api/v1/me/logins')).body.totp).to.equal(true);
    const badPassword = await agent.delete('/api/v1/me/mfa/totp').send({ password: 'not my password', code: totpCode(secret, h.clock.now()) });
    expect(badPassword.status).to.equal(400);
    expect(badPassword.body.code).to.equal('wrong_current_password');
    const badCode = await agent.delete('/api/v1/me/mfa/totp').send({ code: totpCode(secret, new Date(h.clock.now().getTime() + 3600_000)) });
    expect(badCode.status).to.equal(400);
    expect(badCode.body.code).to.equal('invalid_code');
    // A request that prefers Norwegian gets its notice in Bokmål.
    const off = await agent
      .delete('/api/v1/me/mfa/totp')
      .set('Accept-Language', 'nb-NO, en;q=0.5')
      .send({ code: totpCode(secret, h.clock.now()) });
    expect(off.status).to.equal(204);
    expect((await agent.get('/api/v1/me/logins')).body.totp).to.equal(false);
    expect((await request(h.app).post('/api/v1/auth/login').send({ email: 'ha@example.test', password: PASSWORD })).status).to.equal(200);
    const mails = await h.mailsTo('ha@example.test');
    expect(mails.map((m) => m.subject)).to.include('Totrinnsinnlogging ble slått av');
    expect(mails.map((m) => m.subject)).to.include('Two-step sign-in was turned on');
    expect(await h.db.knex('mfa_recovery_codes').count('* as n').first()).to.deep.equal({ n: '0' });
  });

  it('step-up: with TOTP on, DELETE /me takes a fresh code instead of the password, and the change of address needs one', async () => {
    const { agent, secret } = await enrol('io@example.test');
    h.clock.advance(60_000);
    const noProof = await agent.post('/api/v1/me/email').send({ newEmail: 'io2@example.test' });
    expect(noProof.status).to.equal(401);
    expect(noProof.body.code).to.equal('reauthentication_required');
    const withCode = await agent.post('/api/v1/me/email').send({ newEmail: 'io2@example.test', code: totpCode(secret, h.clock.now()) });
    expect(withCode.status).to.equal(204);
    h.clock.advance(30_000);
    const wrongCode = await agent.delete('/api/v1/me').send({ code: totpCode(secret, new Date(h.clock.now().getTime() + 3600_000)) });
    expect(wrongCode.status).to.equal(401);
    expect(wrongCode.body.code).to.equal('reauthentication_required');
    const deleted = await agent.delete('/api/v1/me').send({ code: totpCode(secret, h.clock.now()) });
    expect(deleted.status).to.equal(204);
    // The account's factors went with it (foreign keys cascade).
    expect(await h.db.knex('mfa_totp').count('* as n').first()).to.deep.equal({ n: '0' });
  });

  it('issue 47: with TOTP on, a stolen session plus the password can neither change the password nor delete the account; with a code each works', async () => {
    const { agent, secret } = await enrol('ka@example.test');
    h.clock.advance(60_000);
    const change = await agent.post('/api/v1/me/password').send({ currentPassword: PASSWORD, newPassword: 'a brand new passphrase' });
    expect([change.status, change.body.code]).to.deep.equal([401, 'reauthentication_required']);
    const wrongCode = await agent
      .post('/api/v1/me/password')
      .send({ currentPassword: PASSWORD, newPassword: 'a brand new passphrase', code: totpCode(secret, new Date(h.clock.now().getTime() + 3600_000)) });
    expect([wrongCode.status, wrongCode.body.code]).to.deep.equal([401, 'reauthentication_required']);
    const changed = await agent
      .post('/api/v1/me/password')
      .send({ currentPassword: PASSWORD, newPassword: 'a brand new passphrase', code: totpCode(secret, h.clock.now()) });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(204);
    h.clock.advance(30_000);
    const deleteWithPassword = await agent.delete('/api/v1/me').send({ password: 'a brand new passphrase' });
    expect([deleteWithPassword.status, deleteWithPassword.body.code]).to.deep.equal([401, 'reauthentication_required']);
    expect((await agent.get('/api/v1/me')).status).to.equal(200);
    const deleted = await agent.delete('/api/v1/me').send({ password: 'a brand new passphrase', code: totpCode(secret, h.clock.now()) });
    expect(deleted.status, JSON.stringify(deleted.body)).to.equal(204);
  });

  it('issue 47: 100 wrong codes in a row, over many lockouts and in parallel on two instances, block codes until a recovery code; one notice', async function () {
    this.timeout(600_000);
    const { agent, secret, recoveryCodes } = await enrol('la@example.test');
    const userId = (await agent.get('/api/v1/me')).body.user.id as string;
    const other = await secondInstance();
    // What a right password hands out (the password step itself is tested above; bcrypt per round would only slow this down).
    const mfaTokenFor = async () => (await h.service.accounts.secondFactors!.demand(userId, 'password'))!;
    const wrongAt = (at: Date) => {
      const right = totpCode(secret, at);
      return right === '000000' ? '111111' : '000000';
    };
    let checked = 0;
    for (let round = 0; checked < 100 && round < 40; round++) {
      h.clock.advance(301_000); // past the five-failure lock of the round before
      const mfaToken = await mfaTokenFor();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          request(i % 2 ? other.app : h.app)
            .post('/api/v1/auth/mfa')
            .send({ mfaToken, code: wrongAt(h.clock.now()) }),
        ),
      );
      checked += answers.filter((a) => a.status === 400).length;
      expect(answers.every((a) => a.status === 400 || a.status === 423)).to.equal(true);
    }
    expect(checked).to.be.at.least(100);
    // The count went on over every lockout, one by one in parallel, and stops at the cap.
    expect((await h.db.knex.raw('select failed_codes::int as n from mfa_totp')).rows[0].n).to.equal(100);
    h.clock.advance(301_000);
    const mfaToken = await passwordStep(h.app, 'la@example.test');
    const right = await request(h.app)
      .post('/api/v1/auth/mfa')
      .send({ mfaToken, code: totpCode(secret, h.clock.now()) });
    expect([right.status, right.body.code]).to.deep.equal([400, 'invalid_code']);
    expect(right.body.detail).to.match(/recovery code/);
    const notices = (await h.mailsTo('la@example.test')).filter((m) => m.subject === 'Too many wrong sign-in codes');
    expect(notices).to.have.length(1);
    // A recovery code still signs in, and the count starts again: codes work once more.
    const recovered = await request(other.app).post('/api/v1/auth/mfa').send({ mfaToken, recoveryCode: recoveryCodes[0] });
    expect(recovered.status, JSON.stringify(recovered.body)).to.equal(200);
    h.clock.advance(30_000);
    const again = await passwordStep(h.app, 'la@example.test');
    expect(
      (
        await request(h.app)
          .post('/api/v1/auth/mfa')
          .send({ mfaToken: again, code: totpCode(secret, h.clock.now()) })
      ).status,
    ).to.equal(200);
  });

  it('issue 47: codes blocked by the cap work again after a password reset by mail', async () => {
    const { secret } = await enrol('ma@example.test');
    await h.db.knex.raw('update mfa_totp set failed_codes = 100');
    h.clock.advance(60_000);
    const blocked = await request(h.app)
      .post('/api/v1/auth/mfa')
      .send({ mfaToken: await passwordStep(h.app, 'ma@example.test'), code: totpCode(secret, h.clock.now()) });
    expect([blocked.status, blocked.body.code]).to.deep.equal([400, 'invalid_code']);
    await request(h.app).post('/api/v1/auth/forgot-password').send({ email: 'ma@example.test' }).expect(204);
    const mail = (await h.mailsTo('ma@example.test')).find((m) => m.text.includes('/reset-password'))!;
    const link = linkTo(mail, '/reset-password');
    const reset = await request(h.app)
      .post('/api/v1/auth/reset-password')
      .send({ email: link.searchParams.get('email'), token: link.searchParams.get('token'), newPassword: 'another good passphrase' });
    expect(reset.status, JSON.stringify(reset.body)).to.equal(204);
    expect((await h.db.knex.raw('select failed_codes::int as n from mfa_totp')).rows[0].n).to.equal(0);
    h.clock.advance(30_000);
    const login = await request(h.app).post('/api/v1/auth/login').send({ email: 'ma@example.test', password: 'another good passphrase' });
    expect(login.body.code).to.equal('mfa_required');
    const signedIn = await request(h.app)
      .post('/api/v1/auth/mfa')
      .send({ mfaToken: login.body.mfaToken, code: totpCode(secret, h.clock.now()) });
    expect(signedIn.status, JSON.stringify(signedIn.body)).to.equal(200);
  });

  it('the /sign-in/verify page (a browser social sign-in with TOTP on) asks for the code, signs the browser in and lands on returnUrl', async () => {
    const { agent, secret } = await enrol('jo@example.test');
    const userId = (await agent.get('/api/v1/me')).body.user.id as string;
    h.clock.advance(60_000);
    // What the social callback does for an account with TOTP on (its own test drives a provider).
    const mfaToken = (await h.service.accounts.secondFactors!.demand(userId, 'google', { returnUrl: '/households' }))!;
    const browser = request.agent(h.app);
    const shown = await browser.get(`/sign-in/verify?mfaToken=${encodeURIComponent(mfaToken)}`).set('Host', 'localhost:8080');
    expect(shown.status).to.equal(200);
    expect(shown.text).to.include('name="code"');
    expect(shown.headers['referrer-policy']).to.equal('no-referrer');
    const wrong = await browser
      .post('/sign-in/verify')
      .set('Host', 'localhost:8080')
      .type('form')
      .send({ mfaToken, code: totpCode(secret, new Date(h.clock.now().getTime() + 3600_000)) });
    expect(wrong.status).to.equal(400);
    expect(wrong.text).to.include('That code did not work');
    const right = await browser
      .post('/sign-in/verify')
      .set('Host', 'localhost:8080')
      .type('form')
      .send({ mfaToken, code: totpCode(secret, h.clock.now()) });
    expect(right.status, right.text).to.equal(303);
    expect(right.headers.location).to.equal('/households');
    const me = await browser.get('/api/v1/me');
    expect(me.status).to.equal(200);
    const sessions = await browser.get('/api/v1/me/sessions');
    expect(sessions.body.items.find((x: { current: boolean }) => x.current).method).to.equal('google');
    // Spent.
    const again = await request(h.app)
      .post('/sign-in/verify')
      .set('Host', 'localhost:8080')
      .type('form')
      .send({ mfaToken, code: totpCode(secret, h.clock.now()) });
    expect(again.status).to.equal(401);
    // Locked (five wrong codes through the API): the page says so, with 423.
    const locked = (await h.service.accounts.secondFactors!.demand(userId, 'google', { returnUrl: '/households' }))!;
    const wrongCode = totpCode(secret, h.clock.now()) === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) await request(h.app).post('/api/v1/auth/mfa').send({ mfaToken: locked, code: wrongCode });
    const lockedPage = await request(h.app)
      .post('/sign-in/verify')
      .set('Host', 'localhost:8080')
      .type('form')
      .send({ mfaToken: locked, code: totpCode(secret, h.clock.now()) });
    expect(lockedPage.status).to.equal(423);
    expect(lockedPage.text).to.include('Too many wrong codes');
  });

  it('a personal access token reaches none of it (403 insufficient_scope)', async () => {
    const { agent } = await enrol('ka@example.test');
    const made = await agent.post('/api/v1/me/tokens').send({ name: 'script', scopes: ['events:read', 'households:read'] });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    const bearer = `Bearer ${made.body.token}`;
    for (const [method, path] of [
      ['get', '/api/v1/me/passkeys'],
      ['post', '/api/v1/me/passkeys/options'],
      ['post', '/api/v1/me/mfa/totp'],
      ['delete', '/api/v1/me/mfa/totp'],
      ['post', '/api/v1/auth/passkey/options'],
    ] as const) {
      const res = await request(h.app)[method](path).set('Authorization', bearer).send({});
      expect(res.status, `${method} ${path}`).to.equal(403);
      expect(res.body.code).to.equal('insufficient_scope');
    }
  });

  it('with an Idempotency-Key the TOTP secret and the recovery codes are never kept (a retry runs again)', async () => {
    const agent = await signUp(h.app, 'li@example.test');
    const first = await agent.post('/api/v1/me/mfa/totp').set('Idempotency-Key', 'enrol-1').send({});
    const retry = await agent.post('/api/v1/me/mfa/totp').set('Idempotency-Key', 'enrol-1').send({});
    expect(first.status).to.equal(201);
    expect(retry.status).to.equal(201);
    expect(retry.body.secret).to.not.equal(first.body.secret);
    const confirm = await agent
      .post('/api/v1/me/mfa/totp/confirm')
      .set('Idempotency-Key', 'confirm-1')
      .send({ code: totpCode(retry.body.secret, h.clock.now()) });
    expect(confirm.status).to.equal(200);
    // Kept answers' bodies as text (bytea in the table): neither the secret nor a code is among them.
    const kept = JSON.stringify((await h.db.knex.raw("select convert_from(coalesce(body, ''::bytea), 'UTF8') as body from idempotency_keys")).rows);
    expect(kept).to.not.include(retry.body.secret);
    for (const code of confirm.body.recoveryCodes as string[]) expect(kept).to.not.include(code);
    // A retry of the confirmation runs again: the code was used, so it is refused (nothing replayed).
    const again = await agent
      .post('/api/v1/me/mfa/totp/confirm')
      .set('Idempotency-Key', 'confirm-1')
      .send({ code: totpCode(retry.body.secret, h.clock.now()) });
    expect(again.status).to.equal(409);
  });

  it('a passkey counts as a way to sign in when a provider is unlinked (last_sign_in_method)', async () => {
    const agent = await signUp(h.app, 'mo@example.test');
    const userId = (await agent.get('/api/v1/me')).body.user.id as string;
    // A social-only account (no password) with Google linked.
    await h.db.knex('accounts').where({ id: userId }).update({ passwordHash: null });
    await h.db
      .knex('account_identities')
      .insert({ accountId: userId, provider: 'google', subject: 'g-mo', email: 'mo@example.test', emailVerified: true, createdAt: h.clock.now() });
    const refused = await agent.delete('/api/v1/me/logins/google');
    expect(refused.status).to.equal(409);
    expect(refused.body.code).to.equal('last_sign_in_method');
    // With a passkey (its row as a registration writes it), Google may go.
    await h.db.knex('passkeys').insert({
      id: '00000000-0000-4000-8000-000000000001',
      accountId: userId,
      credentialId: 'cred-mo',
      publicKey: Buffer.from('key'),
      counter: 0,
      transports: null,
      name: 'Phone',
      createdAt: h.clock.now(),
    });
    expect((await agent.get('/api/v1/me/logins')).body).to.include({ passkeys: 1 });
    expect((await agent.delete('/api/v1/me/logins/google')).status).to.equal(204);
  });
});
