import { InputError, TooManyRequestsError } from '@svc/http-kit';
import { AccountFlow, invalidToken, lockoutKey, MAIL_COOLDOWN_MS, type RequestOrigin } from './account-flow.js';
import { looksLikeAddress, normalizeEmail, tidyEmail } from './email.js';
import { accountExistsMail, confirmEmailMail } from './mail-templates.js';
import type { Account } from './store.js';
import { hashToken, newStamp } from './tokens.js';

/** Sign-up and its mailed link: a new account, the confirmation of its address, the confirmation mailed again (rules 3, 6, 8). */
export class SignUpFlow extends AccountFlow {
  /**
   * Rule 3. Answers the new account when the address was fresh (the caller then signs it in), or
   * undefined when it already had an account (that account is mailed; nothing else reveals it).
   * The password is checked and hashed either way, so both answers cost the same.
   */
  async register(input: { email: string; password: string; displayName: string }, origin: RequestOrigin = {}): Promise<Account | undefined> {
    const displayName = input.displayName.trim();
    if (displayName.length === 0)
      throw new InputError('validation_failed', 'The display name must not be blank', [{ field: 'displayName', message: 'must not be blank', in: 'body' }]);
    if (!looksLikeAddress(input.email))
      throw new InputError('signup_rejected', 'The address is not a usable e-mail address', [
        { field: 'email', message: 'is not an e-mail address', in: 'body' },
      ]);
    await this.checkNewPassword(input.password, 'signup_rejected', 'password');
    const email = tidyEmail(input.email);
    const emailNormalized = normalizeEmail(email);
    const passwordHash = await this.hash(input.password);
    const base = this.o.publicBaseUrl;
    // Equal work on both branches (the statement count shows in Server-Timing): a fresh address
    // costs insert, count, mail here plus the new session's row; a taken one insert, read, count,
    // mail. The mail goes to the outbox either way and is sent after the answer.
    return this.withMail(async (trx) => {
      const created = await this.o.store.insertIfNew(
        { email, emailNormalized, displayName, passwordHash, emailConfirmed: false, securityStamp: newStamp(this.o.random) },
        this.now(),
        trx,
      );
      if (!created) {
        const existing = await this.o.store.findByEmail(emailNormalized, trx);
        const allowed = await this.unaskedMailAllowed(trx, emailNormalized, origin, 'account_exists');
        const to = existing?.email ?? email;
        await this.writeMail(trx, allowed && existing?.email != null, accountExistsMail(base, { to, displayName: existing?.displayName ?? displayName }));
        return undefined;
      }
      // Counted like any unasked mail, but always sent: it comes with a new account, which the
      // next sign-up with this address finds taken.
      await this.unaskedMailAllowed(trx, emailNormalized, origin, 'confirm_email', false);
      const { token, row } = this.newTokenRow(created.id, 'confirm_email', email);
      await this.writeMail(trx, true, confirmEmailMail(base, { to: email, displayName, userId: created.id, token }), row);
      return created;
    });
  }

  /** Rule 6 and decisions.md §3: an already confirmed address answers 204 whatever the token. */
  async confirmEmail(userId: string, token: string): Promise<void> {
    await this.o.store.transaction(async (trx) => {
      // The row lock serialises concurrent confirmations: one spends the token, the rest find the address confirmed.
      const account = await this.o.store.lockById(userId, trx);
      if (!account) throw invalidToken();
      if (account.emailConfirmed) return;
      if (!account.emailNormalized) throw invalidToken();
      const spent = await this.o.store.spendToken(
        {
          tokenHash: hashToken(token),
          purpose: 'confirm_email',
          accountId: userId,
          emailNormalized: account.emailNormalized,
          now: this.now(),
        },
        trx,
      );
      if (!spent) throw invalidToken();
      await this.o.store.update(userId, { emailConfirmed: true }, this.now(), trx);
    });
  }

  /**
   * Rule 8. A confirmed address costs the same statements as one that is mailed; the mail counts
   * as unasked mail to the address. 429 within five minutes of the last confirmation link.
   */
  async resendConfirmation(accountId: string, origin: RequestOrigin = {}): Promise<void> {
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockById(accountId, trx);
      if (!account) return;
      const wanted = !account.emailConfirmed && account.email !== null;
      const last = await this.o.store.lastTokenIssuedAt({ accountId, purpose: 'confirm_email' }, trx);
      const waitMs = last ? last.getTime() + MAIL_COOLDOWN_MS - this.now().getTime() : 0;
      if (wanted && waitMs > 0) throw new TooManyRequestsError('resend_cooldown', 'A confirmation mail went out less than five minutes ago', waitMs / 1000);
      const allowed = await this.unaskedMailAllowed(trx, lockoutKey(account), origin, 'confirm_email');
      const to = account.email ?? '';
      const { token, row } = this.newTokenRow(accountId, 'confirm_email', to);
      await this.writeMail(trx, wanted && allowed, confirmEmailMail(base, { to, displayName: account.displayName, userId: accountId, token }), row);
    });
  }
}
