import { compileValue, type Pojo } from '@svc/db';
import { newRequestContext, runWithContext } from '@svc/http-kit';
import { linksIn } from '@svc/test-support';
import { expect } from 'chai';
import request from 'supertest';
import { identitiesRead, ObjectionPersonStore } from '../src/index.js';
import { createWorld, mailsTo, PASSWORD, signedUp, type World } from './helpers.js';

describe('a person’s sign-in methods: GET /me/logins, DELETE /me/logins/{provider}', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  beforeEach(async () => w.reset());
  after(async () => w?.close());

  async function link(accountId: string, provider: 'google' | 'apple', email: string | null, at: string) {
    await w.db.knex('account_identities').insert({ accountId, provider, subject: `${provider}-${accountId}`, email, emailVerified: true, createdAt: at });
  }

  /** An account made by social sign-in: no password, its address confirmed. */
  async function socialAccount(email: string): Promise<{ agent: request.Agent; userId: string }> {
    const account = await w.accounts.service.createPasswordlessAccount({ email, emailVerified: true, displayName: 'Sam' });
    const agent = request.agent(w.app);
    expect((await agent.post('/api/v1/test/sign-in').send({ accountId: account!.id, method: 'google' })).status).to.equal(200);
    return { agent, userId: account!.id };
  }

  it('lists the password and the linked identities, oldest link first', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    expect((await agent.get('/api/v1/me/logins')).body).to.deep.equal({ hasPassword: true, identities: [], totp: false, passkeys: 0 });
    await link(userId, 'apple', null, '2026-11-22T10:00:00.000Z');
    await link(userId, 'google', 'ada@gmail.test', '2026-11-22T09:30:00.000Z');
    const res = await agent.get('/api/v1/me/logins');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      hasPassword: true,
      identities: [
        { provider: 'google', email: 'ada@gmail.test', linkedAt: '2026-11-22T09:30:00.000Z' },
        { provider: 'apple', email: null, linkedAt: '2026-11-22T10:00:00.000Z' },
      ],
      totp: false,
      passkeys: 0,
    });
  });

  it('the store answers without the kernel (one statement: the same declared read, inside the caller’s transaction when given) what it answers from the loaded rows', async () => {
    const { userId } = await signedUp(w, 'ada@example.test');
    const other = await signedUp(w, 'bob@example.test');
    await link(userId, 'apple', null, '2026-11-22T10:00:00.123456Z');
    await link(userId, 'google', 'ada@gmail.test', '2026-11-22T09:30:00.000Z');
    await link(other.userId, 'google', 'bob@gmail.test', '2026-11-22T09:00:00.000Z');
    const store = new ObjectionPersonStore(w.db.knex);
    /** What the read kernel loads of `identitiesRead()` (no second factors lent: the rows alone) for the account. */
    const lent = async (): Promise<Pojo[]> => {
      const b = { account: 'p.account', household: 'null', arg: 'null', known: 'null' };
      const { rows } = await w.db.knex.raw(`select ${compileValue(identitiesRead(), b)} as v from (select ?::uuid as account) p`, [userId]);
      return rows[0].v;
    };
    const ctx = newRequestContext('test');
    const own = await runWithContext(ctx, () => store.identities(userId));
    expect(ctx.db.queries).to.equal(1);
    expect(own).to.deep.equal([
      { provider: 'google', email: 'ada@gmail.test', linkedAt: '2026-11-22T09:30:00.000Z' },
      { provider: 'apple', email: null, linkedAt: '2026-11-22T10:00:00.123Z' },
    ]);
    expect(await store.identities(userId, undefined, await lent())).to.deep.equal(own);
    // Given a transaction, it reads in it: what the transaction wrote and has not committed.
    const trx = await w.db.knex.transaction();
    try {
      await trx('account_identities').delete().where({ accountId: userId, provider: 'apple' });
      expect((await store.identities(userId, trx)).map((i) => i.provider)).to.deep.equal(['google']);
      expect((await store.identities(userId)).map((i) => i.provider)).to.deep.equal(['google', 'apple']);
    } finally {
      await trx.rollback();
    }
    expect(await store.identities(userId)).to.deep.equal(own);
    expect(await store.identities(other.userId)).to.deep.equal([{ provider: 'google', email: 'bob@gmail.test', linkedAt: '2026-11-22T09:00:00.000Z' }]);
  });

  it('unlinks a provider (any case), and mails the account holder a notice without a secret', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    await link(userId, 'google', 'ada@gmail.test', '2026-11-22T09:30:00.000Z');
    await w.deliver();
    w.smtp.clear();
    const res = await agent.delete('/api/v1/me/logins/GooGle');
    expect(res.status).to.equal(204);
    expect((await agent.get('/api/v1/me/logins')).body.identities).to.deep.equal([]);
    await w.deliver();
    const [notice, ...more] = mailsTo(w, 'ada@example.test');
    expect(more).to.deep.equal([]);
    expect(notice!.subject).to.equal('Google sign-in was removed from your account');
    expect(linksIn(notice!.text).map((u) => u.pathname)).to.deep.equal(['/login']);
    expect(notice!.text).to.not.match(/token=|[A-Za-z0-9_-]{40,}/);
  });

  it('answers 404 for a provider that is not linked, or unknown', async () => {
    const { agent, userId } = await signedUp(w, 'ada@example.test');
    await link(userId, 'google', null, '2026-11-22T09:30:00.000Z');
    for (const provider of ['apple', 'facebook']) {
      const res = await agent.delete(`/api/v1/me/logins/${provider}`);
      expect(res.status, provider).to.equal(404);
      expect(res.body.code).to.equal('not_found');
    }
    await w.deliver();
    expect(mailsTo(w, 'ada@example.test', /removed/)).to.deep.equal([]);
  });

  it('answers 409 last_sign_in_method for the only way to sign in, and changes nothing', async () => {
    const { agent, userId } = await socialAccount('sam@example.test');
    await link(userId, 'google', 'sam@example.test', '2026-11-22T09:30:00.000Z');
    expect((await agent.get('/api/v1/me/logins')).body.hasPassword).to.equal(false);
    const res = await agent.delete('/api/v1/me/logins/google');
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('last_sign_in_method');
    expect((await agent.get('/api/v1/me/logins')).body.identities).to.have.length(1);
    // With a password set, the identity can go.
    expect((await agent.post('/api/v1/me/password').send({ currentPassword: null, newPassword: PASSWORD })).status).to.equal(204);
    expect((await agent.delete('/api/v1/me/logins/google')).status).to.equal(204);
  });

  it('two unlinks at once cannot take the last two ways to sign in: one succeeds, the other answers 409', async () => {
    const { agent, userId } = await socialAccount('sam@example.test');
    await link(userId, 'google', 'sam@example.test', '2026-11-22T09:30:00.000Z');
    await link(userId, 'apple', null, '2026-11-22T09:31:00.000Z');
    const answers = await Promise.all([agent.delete('/api/v1/me/logins/google'), agent.delete('/api/v1/me/logins/apple')]);
    const [google, apple] = answers.map((r) => r.status);
    const left = await w.db.knex('account_identities').where({ accountId: userId });
    expect(left, 'one way to sign in is always left').to.have.length(1);
    // The agent signed in through Google. If Google's unlink commits first, that session ends with
    // it, and Apple's unlink, when it reads its session after that commit, answers 401 (nothing
    // unlinked); read before it, the two are ordered by the account's lock and the second answers 409.
    if (google === 204) {
      expect(apple, 'apple after google').to.be.oneOf([401, 409]);
      expect(left[0].provider).to.equal('apple');
    } else {
      expect([google, apple]).to.deep.equal([409, 204]);
      expect(left[0].provider).to.equal('google');
    }
  });

  it('needs a session (401)', async () => {
    expect((await request(w.app).get('/api/v1/me/logins')).status).to.equal(401);
    expect((await request(w.app).delete('/api/v1/me/logins/google')).status).to.equal(401);
  });
});
