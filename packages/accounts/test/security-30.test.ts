/**
 * Issue 30 items 3, 5, 6, 7 and 8, each a class of defect an outside audit found:
 * addresses in the documented form only (3), an absolute session lifetime (5), no control
 * characters in names or mails (6), the export refused to cross-site navigations (7), passwords
 * normalised before hashing (8).
 */
import bcryptModule from '@node-rs/bcrypt';
import { expect } from 'chai';
import request from 'supertest';
import { looksLikeAddress } from '../src/email.js';
import { compose } from '../src/mail-templates.js';
import { prehash } from '../src/PasswordHasher.js';
import { createWorld, login, mailsTo, PASSWORD, register, signedUp, type World } from './helpers.js';

const DAY = 24 * 3600_000;

describe('issue 30: addresses, session lifetime, control characters, the export, password normalisation', () => {
  let w: World;
  before(async () => {
    w = await createWorld();
  });
  beforeEach(async () => w.reset());
  after(async () => w?.close());

  describe('item 3: one mailbox, one account (addresses in the documented form, limits on the canonical address)', () => {
    const ODD_FORMS = [
      '<v@x.example>',
      '<<v@x.example>>',
      'mailto:v@x.example',
      'Vera <v@x.example>',
      '"v"@x.example',
      'v@x.example.',
      'v@[192.0.2.1]',
      'v x@x.example',
      '.v@x.example',
    ];

    it('accepts a plain addr-spec only: brackets, display names, schemes, quotes, IP literals are not addresses', () => {
      for (const a of ['v@x.example', 'V.Nilsen+meals@X.Example', ' v@x.example ', 'åse@eksempel.no', "o'hara@x.example"])
        expect(looksLikeAddress(a), a).to.equal(true);
      for (const a of ODD_FORMS) expect(looksLikeAddress(a), a).to.equal(false);
    });

    it('register, change of address and forgot-password refuse the other forms (register 400 signup_rejected, change 400 email_not_an_address, forgot mails nothing)', async () => {
      for (const email of ODD_FORMS) {
        const res = await register(request(w.app), email);
        expect(res.status, email).to.equal(400);
        expect(res.body.code, email).to.equal('signup_rejected');
      }
      expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
      const { agent } = await signedUp(w, 'v@x.example');
      for (const newEmail of ODD_FORMS) {
        const res = await agent.post('/api/v1/me/email').send({ newEmail: newEmail.replace('v@', 'w@') });
        expect(res.status, newEmail).to.equal(400);
        expect(res.body.code, newEmail).to.equal('email_not_an_address');
      }
      await w.deliver();
      w.smtp.clear();
      w.clock.advance(3600_000);
      for (const email of ['<v@x.example>', 'mailto:v@x.example']) await request(w.app).post('/api/v1/auth/forgot-password').send({ email }).expect(204);
      await w.deliver();
      expect(w.smtp.mails).to.deep.equal([]);
    });

    it('36 parallel registrations of variants of one address: one account, and at most the per-address limit of mails reach the mailbox', async () => {
      const variants = ['v@x.example', 'V@x.example', 'v@X.EXAMPLE', ' v@x.example ', ...ODD_FORMS.slice(0, 4)];
      const answers = await Promise.all(
        Array.from({ length: 36 }, (_, i) => register(request(w.app), variants[i % variants.length]!, PASSWORD, `Person ${i}`)),
      );
      for (const r of answers) expect([200, 400]).to.include(r.status);
      expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '1' });
      await w.deliver();
      const toMailbox = w.smtp.mails.filter((m) => m.to.some((t) => t.toLowerCase() === 'v@x.example'));
      expect(toMailbox.length).to.be.within(1, 5);
      expect(w.smtp.mails).to.have.length(toMailbox.length);
    });
  });

  describe('item 5: an absolute session lifetime (SESSION_MAX_AGE_DAYS, default 90)', () => {
    it('a session used every day is refused (401) once it signed in over 90 days ago, and never renewed past that', async () => {
      const { agent, userId } = await signedUp(w, 'ada@example.test');
      const signedInAt = w.clock.now().getTime();
      for (let day = 1; day < 90; day++) {
        w.clock.advance(DAY);
        expect((await agent.get('/api/v1/me')).status, `day ${day}`).to.equal(200);
      }
      const [row] = await w.db.knex('account_sessions').where({ accountId: userId }).select('expire');
      expect(new Date(row.expire).getTime()).to.be.at.most(signedInAt + 90 * DAY);
      w.clock.advance(DAY + 1000);
      const late = await agent.get('/api/v1/me');
      expect(late.status).to.equal(401);
      expect(late.headers['set-cookie']).to.equal(undefined);
      // Not on the write path either (a state-changing request would renew it).
      expect((await agent.patch('/api/v1/me').send({ displayName: 'Ada' })).status).to.equal(401);
      // Signing in again starts a new lifetime.
      await login(agent, 'ada@example.test').expect(200);
      expect((await agent.get('/api/v1/me')).status).to.equal(200);
    });

    it('is configurable: with one day, a session signed in 25 hours ago is over', async () => {
      const app = w.another({ sessionMaxAgeDays: 1 }).app;
      const agent = request.agent(app);
      await register(agent, 'ada@example.test').expect(200);
      w.clock.advance(23 * 3600_000);
      expect((await agent.get('/api/v1/me')).status).to.equal(200);
      w.clock.advance(2 * 3600_000);
      expect((await agent.get('/api/v1/me')).status).to.equal(401);
    });
  });

  describe('item 6: no control characters in names, none in mails', () => {
    it('a registration with CR/LF in displayName answers 400 validation_failed naming the field, and mails nothing', async () => {
      for (const displayName of ['Ada\r\nClick https://evil.example to confirm', 'Ada\u0007', 'Ada\u2028x', '\u202Eadmin', 'A\u0085da']) {
        const res = await register(request(w.app), 'victim@example.test', PASSWORD, displayName);
        expect(res.status, JSON.stringify(displayName)).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.errors.map((e: { field: string }) => e.field)).to.deep.equal(['displayName']);
      }
      expect(await w.db.knex('accounts').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
      await w.deliver();
      expect(w.smtp.mails).to.deep.equal([]);
    });

    it('keeps names that only look unusual: emoji with joiners, Persian with the non-joiner, accents', async () => {
      for (const displayName of ['Familien 👨‍👩‍👧', 'می‌خواهم', 'Åse Ødegård']) {
        const res = await register(request(w.app), `p${displayName.length}@example.test`, PASSWORD, displayName);
        expect(res.status, displayName).to.equal(200);
      }
    });

    it('PATCH /me: a control character is validation_failed (account_name_length stays for missing, null, blank, over 80)', async () => {
      const { agent } = await signedUp(w, 'ada@example.test');
      const bad = await agent.patch('/api/v1/me').send({ displayName: 'Ada\nLovelace' });
      expect(bad.status).to.equal(400);
      expect(bad.body.code).to.equal('validation_failed');
      expect((await agent.patch('/api/v1/me').send({ displayName: 'x'.repeat(81) })).body.code).to.equal('account_name_length');
      expect((await agent.patch('/api/v1/me').send({ displayName: '   ' })).body.code).to.equal('account_name_length');
    });

    it('a name stored before the rule (or from a provider) cannot break a line of a mail', async () => {
      const mail = compose(
        'confirm_email',
        'v@x.example',
        'Subject\r\nBcc: x@evil.example',
        'Hello Ada\r\n\r\nClick here,',
        ['one\u2028two', 'three\u202Efour'],
        undefined,
      );
      expect(mail.subject).to.not.match(/[\r\n]/);
      expect(mail.text.split('\n')[0]).to.equal('Hello Ada    Click here,');
      expect(mail.text).to.not.match(/[\r\u2028\u202E]/);
    });
  });

  describe('item 7: GET /me/export is answered only to this origin or a direct request', () => {
    it('a cross-site (or same-site) navigation carrying the cookie gets 403 forbidden and spends nothing; same-origin, none and no header are served', async () => {
      const { agent } = await signedUp(w, 'ada@example.test');
      await w.deliver();
      w.smtp.clear();
      for (const site of ['cross-site', 'same-site']) {
        const res = await agent.get('/api/v1/me/export').set('Sec-Fetch-Site', site).set('Sec-Fetch-Mode', 'navigate');
        expect(res.status, site).to.equal(403);
        expect(res.body.code).to.equal('forbidden');
      }
      expect(await w.db.knex('account_exports').count({ n: '*' }).first()).to.deep.equal({ n: '0' });
      await w.deliver();
      expect(w.smtp.mails).to.deep.equal([]);
      for (const site of ['same-origin', 'none', undefined]) {
        const req = agent.get('/api/v1/me/export');
        const res = await (site ? req.set('Sec-Fetch-Site', site) : req);
        expect(res.status, String(site)).to.equal(200);
        w.clock.advance(61_000);
      }
    });
  });

  describe('item 8: passwords are normalised (NFKC) before hashing', () => {
    const NFC = 'crème brûlée för två'.normalize('NFC');
    const NFD = NFC.normalize('NFD');

    it('registered in NFC, signs in with NFD (and with full-width forms NFKC folds)', async () => {
      expect(NFC).to.not.equal(NFD);
      await register(request(w.app), 'ada@example.test', NFC).expect(200);
      await login(request.agent(w.app), 'ada@example.test', NFD).expect(200);
      await login(request.agent(w.app), 'ada@example.test', NFC).expect(200);
      await login(request.agent(w.app), 'ada@example.test', 'crème brûlée för tvä').expect(401);
      await register(request(w.app), 'bo@example.test', 'ＰＡＳＳＷＯＲＤ１２３').expect(200);
      await login(request.agent(w.app), 'bo@example.test', 'PASSWORD123').expect(200);
    });

    it('a hash made before normalisation (of the NFD form as typed) still verifies, and is replaced by the normalised one', async () => {
      const { userId } = await signedUp(w, 'ada@example.test');
      const legacy = await bcryptModule.hash(prehash(NFD), { cost: 4 });
      await w.db.knex('accounts').where({ id: userId }).update({ passwordHash: legacy });
      await login(request.agent(w.app), 'ada@example.test', NFD).expect(200);
      const [{ passwordHash }] = await w.db.knex('accounts').where({ id: userId }).select('passwordHash');
      expect(passwordHash).to.not.equal(legacy);
      // Now any form of it signs in.
      await login(request.agent(w.app), 'ada@example.test', NFC).expect(200);
      await login(request.agent(w.app), 'ada@example.test', NFD).expect(200);
      expect(mailsTo(w, 'ada@example.test', /password/i)).to.deep.equal([]);
    });
  });
});
