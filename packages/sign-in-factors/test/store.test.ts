import { randomBytes, randomUUID } from 'node:crypto';
import { runMigrations } from '@svc/db';
import { createTestDatabase, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import { FactorSecrets, migrations, SignInFactorStore, totpCode } from '../src/index.js';
import { matchingStep, newTotpSecret } from '../src/totp.js';

describe('sign-in-factors store and secrets', () => {
  let db: TestDatabase;
  let store: SignInFactorStore;
  before(async () => {
    db = await createTestDatabase();
    await runMigrations(db.knex, [migrations]);
    store = new SignInFactorStore(db.knex);
  });
  after(() => db.destroy());

  it('seals a TOTP secret for its account only, and hashes recovery codes with a key', () => {
    const secrets = new FactorSecrets('a secret of the host');
    const a = randomUUID();
    const sealed = secrets.seal(a, 'JBSWY3DPEHPK3PXP', randomBytes(12));
    expect(secrets.open(a, sealed)).to.equal('JBSWY3DPEHPK3PXP');
    expect(secrets.open(randomUUID(), sealed)).to.equal(null);
    expect(new FactorSecrets('another secret').open(a, sealed)).to.equal(null);
    expect(secrets.recoveryCodeHash('ABCDE-FGHIJ').equals(secrets.recoveryCodeHash('abcde fghij'))).to.equal(true);
    expect(secrets.recoveryCodeHash('abcde-fghij').equals(new FactorSecrets('another secret').recoveryCodeHash('abcde-fghij'))).to.equal(false);
  });

  it('matches a code one step either side (SHA-1, 6 digits, 30 s), and nothing further', () => {
    const secret = newTotpSecret(randomBytes);
    const now = new Date('2026-11-27T12:00:10.000Z');
    const step = Math.floor(now.getTime() / 30_000);
    expect(matchingStep(secret, totpCode(secret, now), now)).to.equal(step);
    expect(matchingStep(secret, totpCode(secret, new Date(now.getTime() - 30_000)), now)).to.equal(step - 1);
    expect(matchingStep(secret, totpCode(secret, new Date(now.getTime() + 30_000)), now)).to.equal(step + 1);
    expect(matchingStep(secret, totpCode(secret, new Date(now.getTime() + 90_000)), now)).to.equal(null);
    expect(matchingStep(secret, 'abcdef', now)).to.equal(null);
  });

  it('uses a step once, and no earlier step after it, of 20 parallel attempts exactly one', async () => {
    const accountId = randomUUID();
    await store.putPendingTotp(accountId, Buffer.from('sealed'), new Date());
    expect(await store.useStep(accountId, 100, { at: new Date() })).to.equal(true);
    const wins = await Promise.all(Array.from({ length: 20 }, () => store.useStep(accountId, 101, undefined)));
    expect(wins.filter(Boolean)).to.have.length(1);
    expect(await store.useStep(accountId, 100, undefined)).to.equal(false);
    // While on, enrolment is refused (no new pending secret).
    expect(await store.putPendingTotp(accountId, Buffer.from('other'), new Date())).to.equal(false);
  });

  it('takes a WebAuthn challenge once (20 in parallel), never after it expired, never for another purpose', async () => {
    const now = new Date('2026-11-27T12:00:00.000Z');
    await store.insertChallenge({ challenge: 'c1', purpose: 'authentication', accountId: null, expiresAt: new Date(now.getTime() + 300_000) });
    const taken = await Promise.all(Array.from({ length: 20 }, () => store.takeChallenge('c1', 'authentication', null, now)));
    expect(taken.filter(Boolean)).to.have.length(1);
    await store.insertChallenge({ challenge: 'c2', purpose: 'authentication', accountId: null, expiresAt: new Date(now.getTime() + 300_000) });
    expect(await store.takeChallenge('c2', 'registration', null, now)).to.equal(false);
    expect(await store.takeChallenge('c2', 'authentication', null, new Date(now.getTime() + 300_000))).to.equal(false);
  });

  it('bounds what is stored: five registration challenges an account, and sign-in challenges while the live ones are under the cap', async () => {
    const now = new Date('2026-11-27T12:00:00.000Z');
    const later = new Date(now.getTime() + 300_000);
    const accountId = randomUUID();
    for (let i = 0; i < 8; i++) {
      expect(await store.insertChallenge({ challenge: `r${i}`, purpose: 'registration', accountId, expiresAt: new Date(later.getTime() + i) })).to.equal(true);
    }
    const kept = await db.knex.raw('select challenge from webauthn_challenges where account_id = ? order by challenge', [accountId]);
    expect(kept.rows.map((r: { challenge: string }) => r.challenge)).to.deep.equal(['r3', 'r4', 'r5', 'r6', 'r7']);
    await db.knex.raw('delete from webauthn_challenges where account_id is null');
    const made = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        store.insertChallenge({ challenge: `s${i}`, purpose: 'authentication', accountId: null, expiresAt: later }, { liveSignIn: 3, now }),
      ),
    );
    expect(made.every(Boolean)).to.equal(true);
    expect(await store.insertChallenge({ challenge: 's3', purpose: 'authentication', accountId: null, expiresAt: later }, { liveSignIn: 3, now })).to.equal(
      false,
    );
    // Once those expired, there is room again.
    expect(
      await store.insertChallenge(
        { challenge: 's4', purpose: 'authentication', accountId: null, expiresAt: new Date(later.getTime() + 300_000) },
        { liveSignIn: 3, now: later },
      ),
    ).to.equal(true);
  });

  it('spends a recovery code once of 20 parallel attempts', async () => {
    const accountId = randomUUID();
    const hash = new FactorSecrets('k').recoveryCodeHash('abcde-fghij');
    await store.transaction((trx) => store.replaceRecoveryCodes(accountId, [hash], trx));
    const spent = await Promise.all(Array.from({ length: 20 }, () => store.spendRecoveryCode(accountId, hash, new Date())));
    expect(spent.filter(Boolean)).to.have.length(1);
    expect(await store.unusedRecoveryCodes(accountId)).to.equal(0);
  });
});
