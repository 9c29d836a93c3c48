import { expect } from 'chai';
import request from 'supertest';
import { createWorld, dbQueries, linkIn, mailsTo, PASSWORD, register, sessionCookie, type World } from './helpers.js';

describe('POST /api/v1/auth/register', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());

  it('answers 200 {} for a fresh address, sets the session cookie and mails a confirmation link', async () => {
    const agent = request.agent(w.app);
    const res = await register(agent, 'Ada@Example.test');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({});
    expect(res.headers['cache-control']).to.equal('no-store');
    expect(sessionCookie(res)).to.be.a('string');

    const me = await agent.get('/api/v1/me');
    expect(me.status).to.equal(200);
    expect(me.body.user).to.include({ email: 'Ada@Example.test', displayName: 'Ada Lovelace' });
    expect(me.body).to.include({ emailConfirmed: false, hasPassword: true, isPlatformAdmin: false });

    await w.deliver();
    const [mail, ...more] = mailsTo(w, 'Ada@Example.test');
    expect(more).to.have.length(0);
    expect(mail!.subject).to.match(/confirm/i);
    expect(mail!.html).to.contain('/confirm-email?');
    const { url, params } = linkIn(mail!);
    expect(url.origin + url.pathname).to.equal('https://meals.example.test/confirm-email');
    expect(Object.keys(params)).to.deep.equal(['userId', 'token']);
    expect(params.userId).to.equal(me.body.user.id);
    expect(params.token).to.match(/^[A-Za-z0-9_-]{43}$/);

    const confirm = await request(w.app).post('/api/v1/auth/confirm-email').send(params);
    expect(confirm.status).to.equal(204);
    expect((await agent.get('/api/v1/me')).body.emailConfirmed).to.equal(true);
  });

  it('answers 200 {} for a known address (any case), sets no cookie, changes nothing and mails "account already exists"', async () => {
    await register(request(w.app), 'ada@example.test');
    await w.deliver();
    w.smtp.clear();
    const res = await register(request(w.app), '  ADA@example.TEST ', 'another password entirely', 'Impostor');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({});
    expect(sessionCookie(res)).to.equal(undefined);
    const rows = await w.db.knex('accounts').select('displayName');
    expect(rows).to.deep.equal([{ displayName: 'Ada Lovelace' }]);
    await w.deliver();
    const mails = mailsTo(w, 'ada@example.test');
    expect(mails).to.have.length(1);
    expect(mails[0]!.subject).to.match(/already have an account/i);
    expect(mails[0]!.text).to.contain('https://meals.example.test/login');
    // The known-address answer cannot log the stranger in with their password.
    expect((await request.agent(w.app).post('/api/v1/auth/login').send({ email: 'ada@example.test', password: 'another password entirely' })).status).to.equal(
      401,
    );
  });

  it('answers 400 signup_rejected for an address that is not one, and for a password under 8 characters', async () => {
    for (const email of ['not-an-address', 'a@b', 'two@@example.test', 'sp ace@example.test']) {
      const res = await register(request(w.app), email);
      expect(res.status, email).to.equal(400);
      expect(res.body.code, email).to.equal('signup_rejected');
    }
    const short = await register(request(w.app), 'short@example.test', '1234567');
    expect(short.status).to.equal(400);
    expect(short.body.code).to.equal('signup_rejected');
    expect(short.body.detail).to.match(/8/);
    expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });

  it('accepts exactly 8 and exactly 256 characters, and answers 400 value_too_long beyond 256', async () => {
    expect((await register(request(w.app), 'eight@example.test', '12345678')).status).to.equal(200);
    expect((await register(request(w.app), 'long@example.test', 'x'.repeat(256))).status).to.equal(200);
    const res = await register(request(w.app), 'longer@example.test', 'x'.repeat(257));
    expect(res.status).to.equal(400);
    expect(res.body.code).to.equal('value_too_long');
    expect(res.body.errors[0].field).to.equal('password');
  });

  it('answers 400 value_too_long for an address over 254 characters and a display name over 80', async () => {
    const long = `${'a'.repeat(64)}@${'b'.repeat(186)}.test`;
    expect(long.length).to.equal(256);
    expect((await register(request(w.app), long)).body.code).to.equal('value_too_long');
    expect((await register(request(w.app), 'n@example.test', PASSWORD, 'x'.repeat(81))).body.code).to.equal('value_too_long');
  });

  it('answers 400 validation_failed naming a missing field, a null, a blank display name, or a body that is not JSON', async () => {
    const missing = await request(w.app).post('/api/v1/auth/register').send({ email: 'x@example.test', password: PASSWORD });
    expect(missing.status).to.equal(400);
    expect(missing.body.code).to.equal('validation_failed');
    expect(missing.body.errors.map((e: { field: string }) => e.field)).to.deep.equal(['displayName']);
    const nul = await request(w.app).post('/api/v1/auth/register').send({ email: null, password: PASSWORD, displayName: 'A' });
    expect(nul.body.code).to.equal('validation_failed');
    const blank = await register(request(w.app), 'x@example.test', PASSWORD, '   ');
    expect(blank.status).to.equal(400);
    expect(blank.body.code).to.equal('validation_failed');
    const form = await request(w.app).post('/api/v1/auth/register').type('form').send('email=x@example.test&password=12345678&displayName=A');
    expect(form.status).to.equal(400);
    expect(form.body.code).to.equal('validation_failed');
    expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });

  it('stores the address lower-cased in a unique column and the display name trimmed', async () => {
    await register(request(w.app), ' Mixed.Case@Example.TEST ', PASSWORD, '  Grace  ');
    const row = await w.db.knex('accounts').first();
    expect(row).to.include({ email: 'Mixed.Case@Example.TEST', emailNormalized: 'mixed.case@example.test', displayName: 'Grace', emailConfirmed: false });
    expect(row.passwordHash).to.match(/^\$2b\$04\$/);
  });

  it('links a waitlist entry made for the address before the account existed', async () => {
    await w.db.knex('waitlist').insert({ emailNormalized: 'early@example.test', reason: 'intake_paused', createdAt: new Date() });
    const res = await register(request(w.app), 'Early@Example.test');
    expect(res.status).to.equal(200);
    const account = await w.db.knex('accounts').first();
    const entries = await w.accounts.directory.listWaitlist();
    expect(entries).to.have.length(1);
    expect(entries[0]).to.include({ accountId: account.id, email: 'Early@Example.test', reason: 'intake_paused' });
  });

  it('writes the account, its token and its mail in one transaction: a refused sign-up leaves nothing', async () => {
    await register(request(w.app), 'bad', PASSWORD);
    expect(await w.db.knex('mail_outbox').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    const ok = await register(request(w.app), 'good@example.test');
    expect(dbQueries(ok)).to.be.greaterThan(0);
    expect(await w.db.knex('mail_outbox').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    expect(await w.db.knex('account_tokens').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
  });
});
