import { expect } from 'chai';
import request from 'supertest';
import { createWorld, login, mailsTo, PASSWORD, register, sessionCookie, signedUp, type World } from './helpers.js';

/** Every table of this package that holds rows about one account, and how to find them. */
const OWN_ROWS: Record<string, string> = {
  accounts: 'id = ?',
  account_sessions: 'account_id = ?',
  account_identities: 'account_id = ?',
  account_tokens: 'account_id = ?',
  app_signin_codes: 'account_id = ?',
  account_exports: 'account_id = ?',
  waitlist: 'account_id = ?',
  test_devices: 'user_id = ?',
};

describe('deleting one’s account: DELETE /api/v1/me', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  beforeEach(async () => w.reset());
  after(async () => w?.close());

  async function rowsOf(userId: string): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const [table, where] of Object.entries(OWN_ROWS)) {
      const { rows } = await w.db.knex.raw(`select count(*)::int as n from ${table} where ${where}`, [userId]);
      out[table] = rows[0].n;
    }
    return out;
  }

  /** An account with something in every table of this package. */
  async function fullAccount(email: string) {
    const person = await signedUp(w, email);
    const phone = request.agent(w.another().app);
    expect((await login(phone, email)).status).to.equal(200);
    await w.db
      .knex('account_identities')
      .insert({ accountId: person.userId, provider: 'apple', subject: `apple-${email}`, email: null, emailVerified: false, createdAt: w.clock.now() });
    await w.db.knex('app_signin_codes').insert({
      codeHash: Buffer.from(email),
      accountId: person.userId,
      codeChallenge: 'x'.repeat(43),
      redirectUri: 'app://cb',
      createdAt: w.clock.now(),
      expiresAt: w.clock.now(),
    });
    await w.accounts.directory.addToWaitlist({ accountId: person.userId, reason: 'intake_paused' });
    await w.personal.addDevice(person.userId, `device-of-${email}`);
    expect((await person.agent.post('/api/v1/me/email').send({ newEmail: `new-${email}` })).status).to.equal(204);
    w.clock.advance(61_000);
    expect((await person.agent.get('/api/v1/me/export')).status).to.equal(200);
    return { ...person, phone };
  }

  it('deletes the account and everything of it in this package (and through the steps), keeps everyone else’s, mails a notice, and the address can register again at once', async () => {
    const ada = await fullAccount('ada@example.test');
    const bob = await fullAccount('bob@example.test');
    const bobBefore = await rowsOf(bob.userId);
    const adaBefore = await rowsOf(ada.userId);
    for (const [table, n] of Object.entries(adaBefore)) expect(n, table).to.be.greaterThan(0);
    const outboxBefore = await w.db.knex('mail_outbox').select('recipient');
    expect(outboxBefore.filter((m: { recipient: string }) => m.recipient.endsWith('ada@example.test')).length).to.be.greaterThan(1);
    // A login failure on the address: the address is the person's too.
    await login(request.agent(w.app), 'ada@example.test', 'not the password');
    w.smtp.clear();

    const res = await ada.agent.delete('/api/v1/me').send({ password: PASSWORD });
    expect(res.status).to.equal(204);
    expect(sessionCookie(res)).to.match(/^service_session=;/);

    expect(await rowsOf(ada.userId)).to.deep.equal(Object.fromEntries(Object.keys(OWN_ROWS).map((t) => [t, 0])));
    expect(await rowsOf(bob.userId)).to.deep.equal(bobBefore);
    expect(await w.db.knex('login_failures').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    // The mail to Ada's addresses is gone but the notice; Bob's mail is all there.
    const outbox = await w.db.knex('mail_outbox').select('recipient', 'kind');
    expect(outbox.filter((m: { recipient: string }) => m.recipient.endsWith('ada@example.test'))).to.deep.equal([
      { recipient: 'ada@example.test', kind: 'account_deleted' },
    ]);
    expect(outbox.filter((m: { recipient: string }) => m.recipient.endsWith('bob@example.test'))).to.have.length(
      outboxBefore.filter((m: { recipient: string }) => m.recipient.endsWith('bob@example.test')).length,
    );
    await w.deliver();
    const [notice, ...more] = mailsTo(w, 'ada@example.test');
    expect(more).to.deep.equal([]);
    expect(notice!.subject).to.equal('Your account was deleted');
    expect(notice!.text).to.not.match(/token=/);
    // Delivered, the notice forgets the address too.
    expect(await w.db.knex('mail_outbox').where({ kind: 'account_deleted' }).select('recipient', 'textBody')).to.deep.equal([{ recipient: '', textBody: '' }]);

    // Every session of the account is over, on every instance.
    expect((await ada.agent.get('/api/v1/me')).status).to.equal(401);
    expect((await ada.phone.get('/api/v1/me')).status).to.equal(401);
    expect((await bob.agent.get('/api/v1/me')).status).to.equal(200);
    expect((await bob.phone.get('/api/v1/me')).status).to.equal(200);

    const again = request.agent(w.app);
    expect((await register(again, 'ada@example.test')).status).to.equal(200);
    const me = await again.get('/api/v1/me');
    expect(me.status).to.equal(200);
    expect(me.body.user.id).to.not.equal(ada.userId);
    expect(await w.db.knex('account_identities').where({ subject: 'apple-ada@example.test' }).count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });

  it('answers 401 reauthentication_required without the password or with a wrong one, and each wrong one counts toward the lockout', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    const none = await ada.agent.delete('/api/v1/me').send({});
    expect(none.status).to.equal(401);
    expect(none.body.code).to.equal('reauthentication_required');
    const noBody = await ada.agent.delete('/api/v1/me');
    expect(noBody.status).to.equal(401);
    expect(noBody.body.code).to.equal('reauthentication_required');
    for (let i = 0; i < 5; i++) {
      const wrong = await ada.agent.delete('/api/v1/me').send({ password: `wrong ${i}` });
      expect(wrong.status).to.equal(401);
      expect(wrong.body.code).to.equal('reauthentication_required');
    }
    // Five wrong passwords locked the address, for a login and for the deletion alike.
    const locked = await login(request.agent(w.app), 'ada@example.test');
    expect(locked.status).to.equal(423);
    const right = await ada.agent.delete('/api/v1/me').send({ password: PASSWORD });
    expect(right.status).to.equal(423);
    expect(right.body.code).to.equal('account_locked');
    expect(await w.db.knex('accounts').where({ id: ada.userId }).count({ n: '*' }).first()).to.deep.equal({ n: '1' });
    // After the lock, the right password works.
    w.clock.advance(301_000);
    expect((await ada.agent.delete('/api/v1/me').send({ password: PASSWORD })).status).to.equal(204);
  });

  it('a right password resets the failure count, as a login does', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    for (let i = 0; i < 4; i++) await ada.agent.delete('/api/v1/me').send({ password: 'wrong' });
    w.personal.owners.add(ada.userId); // refused after the check, so the account stays
    expect((await ada.agent.delete('/api/v1/me').send({ password: PASSWORD })).status).to.equal(409);
    expect(await w.db.knex('login_failures').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });

  it('parallel wrong passwords all count: the lockout is reached, none deletes', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => ada.agent.delete('/api/v1/me').send({ password: `wrong ${i}` })));
    for (const r of answers) expect([401, 423]).to.include(r.status);
    expect((await login(request.agent(w.app), 'ada@example.test')).status).to.equal(423);
    expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
  });

  it('an account without a password: a sign-in within the last 10 minutes, else 401 reauthentication_required', async () => {
    const account = await w.accounts.service.createPasswordlessAccount({ email: 'sam@example.test', emailVerified: true, displayName: 'Sam' });
    const agent = request.agent(w.app);
    expect((await agent.post('/api/v1/test/sign-in').send({ accountId: account!.id, method: 'google' })).status).to.equal(200);
    w.clock.advance(10 * 60_000 + 1);
    const stale = await agent.delete('/api/v1/me').send({ password: 'anything' });
    expect(stale.status).to.equal(401);
    expect(stale.body.code).to.equal('reauthentication_required');
    expect(await w.db.knex('login_failures').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
    // Signing in again makes it recent.
    expect((await agent.post('/api/v1/test/sign-in').send({ accountId: account!.id, method: 'google' })).status).to.equal(200);
    w.clock.advance(10 * 60_000);
    const res = await agent.delete('/api/v1/me');
    expect(res.status).to.equal(204);
    expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
  });

  it('409 owner_must_transfer from a step rolls everything back', async () => {
    const ada = await fullAccount('ada@example.test');
    const before = await rowsOf(ada.userId);
    w.personal.owners.add(ada.userId);
    const res = await ada.agent.delete('/api/v1/me').send({ password: PASSWORD });
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('owner_must_transfer');
    // The step had deleted the devices before it refused: the transaction undid that too.
    expect(await rowsOf(ada.userId)).to.deep.equal(before);
    expect((await ada.agent.get('/api/v1/me')).status).to.equal(200);
    await w.deliver();
    expect(mailsTo(w, 'ada@example.test', /deleted/)).to.deep.equal([]);
  });

  it('body checks: 400 for a password that is not a string or too long', async () => {
    const ada = await signedUp(w, 'ada@example.test');
    const notString = await ada.agent.delete('/api/v1/me').send({ password: 12 });
    expect(notString.status).to.equal(400);
    expect(notString.body.code).to.equal('validation_failed');
    const long = await ada.agent.delete('/api/v1/me').send({ password: 'x'.repeat(257) });
    expect(long.status).to.equal(400);
    expect(long.body.code).to.equal('value_too_long');
    expect((await request(w.app).delete('/api/v1/me').send({ password: PASSWORD })).status).to.equal(401);
  });

  it('two deletions at once: one 204, the other finds nothing to delete; nothing is left', async () => {
    const ada = await fullAccount('ada@example.test');
    const answers = await Promise.all([
      ada.agent.delete('/api/v1/me').send({ password: PASSWORD }),
      ada.phone.delete('/api/v1/me').send({ password: PASSWORD }),
    ]);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses[0]).to.equal(204);
    expect(statuses[1]).to.equal(401);
    expect(await rowsOf(ada.userId)).to.deep.equal(Object.fromEntries(Object.keys(OWN_ROWS).map((t) => [t, 0])));
    await w.deliver();
    expect(mailsTo(w, 'ada@example.test', /deleted/)).to.have.length(1);
  });

  it('deletion and logins at once: the account is gone with every session, whichever came first', async () => {
    for (let round = 0; round < 3; round++) {
      await w.reset();
      const ada = await signedUp(w, 'ada@example.test');
      const others = Array.from({ length: 3 }, () => request.agent(w.app));
      const [deleted, ...logins] = await Promise.all([
        ada.agent.delete('/api/v1/me').send({ password: PASSWORD }),
        ...others.map((a) => login(a, 'ada@example.test')),
      ]);
      expect(deleted!.status).to.equal(204);
      for (const l of logins) expect([200, 401]).to.include(l.status);
      expect(await rowsOf(ada.userId)).to.deep.equal(Object.fromEntries(Object.keys(OWN_ROWS).map((t) => [t, 0])));
      expect(await w.db.knex('account_sessions').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
      for (const a of others) expect((await a.get('/api/v1/me')).status).to.equal(401);
    }
  });
});
