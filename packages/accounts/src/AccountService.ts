import type { Clock, RandomBytes } from '@svc/contracts';
import { isPgError, PG } from '@svc/db';
import { InputError, LockedError, type Logger, TooManyRequestsError, timing } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { Account, AccountStore } from './AccountStore.js';
import { looksLikeAddress, normalizeEmail, tidyEmail } from './email.js';
import type { Mailer } from './Mailer.js';
import { accountExistsMail, changeEmailMail, changeEmailNoticeMail, confirmEmailMail, resetPasswordMail } from './mail-templates.js';
import type { PasswordHasher } from './PasswordHasher.js';
import { type BreachChecker, PASSWORD_RULES, passwordTooShort } from './passwords.js';
import { hashToken, newStamp, newToken, TOKEN_LIFETIME_MS, type TokenPurpose } from './tokens.js';

/** Resend-confirmation cooldown and the forgot-password duplicate window (spec, Limits). */
export const MAIL_COOLDOWN_MS = 5 * 60_000;

export interface AccountServiceOptions {
  store: AccountStore;
  hasher: PasswordHasher;
  breach: BreachChecker;
  mailer: Mailer;
  clock: Clock;
  random: RandomBytes;
  logger: Logger;
  publicBaseUrl: string;
  lockoutMaxFailures: number;
  lockoutSeconds: number;
}

/** A password for a new account, change or reset: its form first, then the breach list. */
type PasswordRefusalCode = 'signup_rejected' | 'password_rejected';

/**
 * The account rules of the spec (operations 1–10). Every multi-statement change runs in one
 * transaction, and the mail it causes is written to the outbox inside it.
 */
export class AccountService {
  constructor(private readonly o: AccountServiceOptions) {}

  private now(): Date {
    return this.o.clock.now();
  }

  private async checkNewPassword(password: string, code: PasswordRefusalCode, field: string): Promise<void> {
    if (passwordTooShort(password)) throw new InputError(code, PASSWORD_RULES, [{ field, message: 'must be at least 8 characters', in: 'body' }]);
    if (await timing.step('breach-check', () => this.o.breach.isPwned(password))) {
      throw new InputError('password_pwned', 'This password has been seen in a data breach; choose another', [
        { field, message: 'has been seen in a data breach', in: 'body' },
      ]);
    }
  }

  private hash(password: string): Promise<string> {
    return timing.step('hash-password', () => this.o.hasher.hash(password));
  }

  private async issueToken(
    trx: Knex.Transaction,
    accountId: string,
    purpose: TokenPurpose,
    email: string,
    origin?: 'forgot_password' | 'email_change_notice',
  ): Promise<string> {
    const token = newToken(this.o.random);
    const now = this.now();
    await this.o.store.insertToken(trx, {
      accountId,
      purpose,
      tokenHash: hashToken(token),
      email,
      emailNormalized: normalizeEmail(email),
      origin,
      createdAt: now,
      expiresAt: new Date(now.getTime() + TOKEN_LIFETIME_MS[purpose]),
    });
    return token;
  }

  /** Runs `fn` in a transaction and, once it committed, wakes the mail worker. */
  private async withMail<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    const result = await this.o.store.transaction(fn);
    this.o.mailer.nudge();
    return result;
  }

  /**
   * Rule 3. Answers the new account when the address was fresh (the caller then signs it in), or
   * undefined when it already had an account (that account is mailed; nothing else reveals it).
   * The password is checked and hashed either way, so both answers cost the same.
   */
  async register(input: { email: string; password: string; displayName: string }): Promise<Account | undefined> {
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
    return this.withMail(async (trx) => {
      const created = await this.o.store.insertIfNew(
        trx,
        { email, emailNormalized, displayName, passwordHash, emailConfirmed: false, securityStamp: newStamp(this.o.random) },
        this.now(),
      );
      if (!created) {
        const existing = await this.o.store.findByEmail(emailNormalized, trx);
        if (existing?.email) await this.o.mailer.enqueue(trx, accountExistsMail(base, { to: existing.email, displayName: existing.displayName }));
        return undefined;
      }
      await this.o.store.linkWaitlist(trx, created.id, emailNormalized);
      const token = await this.issueToken(trx, created.id, 'confirm_email', email);
      await this.o.mailer.enqueue(trx, confirmEmailMail(base, { to: email, displayName, userId: created.id, token }));
      return created;
    });
  }

  /**
   * Rule 4 and the lockout of decisions.md §3. Answers the account, or undefined for a wrong
   * address or password (one bcrypt either way). Throws 423 while the address is locked.
   */
  async verifyLogin(emailInput: string, password: string): Promise<Account | undefined> {
    const key = normalizeEmail(emailInput);
    const lockedUntil = await this.o.store.lockedUntil(key);
    if (lockedUntil && lockedUntil.getTime() > this.now().getTime()) {
      // Retry-After: the seconds left of the lock (a reset lifts it sooner).
      const wait = Math.max(1, Math.ceil((lockedUntil.getTime() - this.now().getTime()) / 1000));
      throw new LockedError('account_locked', 'Too many wrong passwords; this account is locked for a few minutes, or until its password is reset', {
        headers: { 'Retry-After': String(wait) },
      });
    }
    const account = key ? await this.o.store.findByEmail(key) : undefined;
    const ok = await timing.step('hash-password', () => this.o.hasher.verifyOrBurn(password, account?.passwordHash));
    if (ok && account) {
      await this.o.store.clearLoginFailures(key);
      return account;
    }
    const now = this.now();
    await this.o.store.recordLoginFailure(key, this.o.lockoutMaxFailures, new Date(now.getTime() + this.o.lockoutSeconds * 1000), now);
    return undefined;
  }

  async updateDisplayName(accountId: string, displayNameInput: string): Promise<Account | undefined> {
    const displayName = displayNameInput.trim();
    if ([...displayName].length < 1 || [...displayName].length > 80) {
      throw new InputError('account_name_length', 'The display name must be 1 to 80 characters', [
        { field: 'displayName', message: 'must be 1 to 80 characters', in: 'body' },
      ]);
    }
    return this.o.store.updateDisplayName(accountId, displayName, this.now());
  }

  /**
   * Rule 1. Answers the new security stamp; the caller re-issues its own session with it. Like a
   * reset, it spends every pending change of address (see `spendTakeoverLinks`).
   */
  async changePassword(accountId: string, currentPassword: string | null, newPassword: string): Promise<string | undefined> {
    const account = await this.o.store.findById(accountId);
    if (!account) return undefined;
    if (account.passwordHash !== null) {
      if (currentPassword === null) {
        throw new InputError('validation_failed', 'currentPassword is required: this account has a password', [
          { field: 'currentPassword', message: 'is required when the account has a password', in: 'body' },
        ]);
      }
      const ok = await timing.step('hash-password', () => this.o.hasher.verify(currentPassword, account.passwordHash!));
      if (!ok)
        throw new InputError('wrong_current_password', 'The current password did not match', [
          { field: 'currentPassword', message: 'did not match', in: 'body' },
        ]);
    }
    await this.checkNewPassword(newPassword, 'password_rejected', 'newPassword');
    const passwordHash = await this.hash(newPassword);
    const securityStamp = newStamp(this.o.random);
    return this.o.store.transaction(async (trx) => {
      const now = this.now();
      // The row lock orders this after (or before) a change of address being requested right now.
      if (!(await this.o.store.lockById(trx, accountId))) return undefined;
      const updated = await this.o.store.update(accountId, { passwordHash, securityStamp }, now, trx);
      await this.spendTakeoverLinks(trx, accountId, now);
      return updated?.securityStamp;
    });
  }

  /**
   * A new password (change or reset) is the owner taking the account back: the change-of-address
   * links still open must die with the old password, or whoever held a session could have asked
   * for the login to move to their address and take the account after the owner reset it (the
   * heads-up mail's reset link would not save it). Reset links stay on a change (they go to the
   * owner's own address and are the owner's way back in, so an intruder who changes the password
   * must not be able to spend them; a reset spends them itself); confirm links stay (they only
   * confirm the address the account already has).
   */
  private async spendTakeoverLinks(trx: Knex.Transaction, accountId: string, now: Date): Promise<void> {
    await this.o.store.spendAllTokens(trx, accountId, 'change_email', now);
  }

  /** Logout (rule 5): a new stamp ends every session of the account at its next request. */
  async rotateStamp(accountId: string): Promise<void> {
    await this.o.store.update(accountId, { securityStamp: newStamp(this.o.random) }, this.now());
  }

  /**
   * For social sign-in: an account without a password. Confirmed when the identity provider
   * vouched for the address. Answers undefined when the address already has an account (the
   * caller decides whether to link it). Waitlist entries for the address become this account's.
   * `link` runs in the same transaction once the account exists (social sign-in links the
   * identity there, so a failed link leaves no account behind).
   */
  async createPasswordlessAccount(
    input: { email: string | null; emailVerified: boolean; displayName: string },
    link?: (trx: Knex.Transaction, account: Account) => Promise<void>,
  ): Promise<Account | undefined> {
    const email = input.email && looksLikeAddress(input.email) ? tidyEmail(input.email) : null;
    const emailNormalized = email ? normalizeEmail(email) : null;
    const displayName = [...(input.displayName.trim() || email?.split('@')[0] || 'Member')].slice(0, 80).join('');
    return this.o.store.transaction(async (trx) => {
      const created = await this.o.store.insertIfNew(
        trx,
        {
          email,
          emailNormalized,
          displayName,
          passwordHash: null,
          emailConfirmed: email !== null && input.emailVerified,
          securityStamp: newStamp(this.o.random),
        },
        this.now(),
      );
      if (created && emailNormalized) await this.o.store.linkWaitlist(trx, created.id, emailNormalized);
      if (created && link) await link(trx, created);
      return created;
    });
  }

  /**
   * For social sign-in that found this account by an address the identity provider vouches for:
   * runs `link` (in one transaction, the account row locked) and answers the account. When nobody
   * had confirmed the address here, the provider's word now proves it: the address becomes
   * confirmed, a password set by whoever registered it without proving it is dropped, and the
   * stamp rotates so their sessions end, and every mailed link still open is spent (account
   * pre-hijacking). Undefined when the account is gone.
   */
  async adoptByVerifiedAddress(accountId: string, link: (trx: Knex.Transaction, account: Account) => Promise<void>): Promise<Account | undefined> {
    return this.o.store.transaction(async (trx) => {
      const account = await this.o.store.lockById(trx, accountId);
      if (!account) return undefined;
      let adopted: Account | undefined = account;
      if (!account.emailConfirmed) {
        const now = this.now();
        adopted = await this.o.store.update(accountId, { emailConfirmed: true, passwordHash: null, securityStamp: newStamp(this.o.random) }, now, trx);
        // Links the squatter asked for (a change of address to one of theirs) must not outlive them.
        for (const purpose of ['confirm_email', 'change_email', 'reset_password'] as const) await this.o.store.spendAllTokens(trx, accountId, purpose, now);
      }
      if (!adopted) return undefined;
      await link(trx, adopted);
      return adopted;
    });
  }

  /** Rule 2. Always 204 for a well-formed address; whether it is taken is never revealed. */
  async requestEmailChange(accountId: string, newEmailInput: string): Promise<void> {
    if (!looksLikeAddress(newEmailInput))
      throw new InputError('email_not_an_address', 'That does not look like an e-mail address', [
        { field: 'newEmail', message: 'is not an e-mail address', in: 'body' },
      ]);
    const newEmail = tidyEmail(newEmailInput);
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockById(trx, accountId);
      if (!account) return;
      // A taken address gets no link (it could never be confirmed); the answer is the same.
      if (!(await this.o.store.emailTaken(normalizeEmail(newEmail), accountId, trx))) {
        const token = await this.issueToken(trx, accountId, 'change_email', newEmail);
        await this.o.mailer.enqueue(trx, changeEmailMail(base, { to: newEmail, displayName: account.displayName, userId: accountId, token }));
      }
      if (account.email) {
        const resetToken = await this.issueToken(trx, accountId, 'reset_password', account.email, 'email_change_notice');
        await this.o.mailer.enqueue(trx, changeEmailNoticeMail(base, { to: account.email, displayName: account.displayName, newEmail, token: resetToken }));
      }
    });
  }

  /** Rule 6 and decisions.md §3: an already confirmed address answers 204 whatever the token. */
  async confirmEmail(userId: string, token: string): Promise<void> {
    await this.o.store.transaction(async (trx) => {
      // The row lock serialises concurrent confirmations: one spends the token, the rest find the address confirmed.
      const account = await this.o.store.lockById(trx, userId);
      if (!account) throw invalidToken();
      if (account.emailConfirmed) return;
      if (!account.emailNormalized) throw invalidToken();
      const spent = await this.o.store.spendToken(trx, {
        tokenHash: hashToken(token),
        purpose: 'confirm_email',
        accountId: userId,
        emailNormalized: account.emailNormalized,
        now: this.now(),
      });
      if (!spent) throw invalidToken();
      await this.o.store.update(userId, { emailConfirmed: true }, this.now(), trx);
    });
  }

  /**
   * Rule 7. The new address becomes the login, confirmed; the stamp rotates (every other session
   * ends). Answers the new stamp so a caller signed in as this account keeps its session.
   */
  async confirmEmailChange(userId: string, newEmailInput: string, token: string): Promise<string> {
    const emailNormalized = normalizeEmail(newEmailInput);
    try {
      return await this.o.store.transaction(async (trx) => {
        const account = await this.o.store.lockById(trx, userId);
        if (!account) throw invalidToken();
        const spent = await this.o.store.spendToken(trx, {
          tokenHash: hashToken(token),
          purpose: 'change_email',
          accountId: userId,
          emailNormalized,
          now: this.now(),
        });
        if (!spent) throw invalidToken();
        if (await this.o.store.emailTaken(emailNormalized, userId, trx)) throw invalidToken('That address now belongs to another account');
        const securityStamp = newStamp(this.o.random);
        await this.o.store.update(userId, { email: spent.email, emailNormalized, emailConfirmed: true, securityStamp }, this.now(), trx);
        return securityStamp;
      });
    } catch (err) {
      // Two accounts confirming the same new address at once: the unique key lets one through.
      if (isPgError(err, PG.uniqueViolation)) throw invalidToken('That address now belongs to another account');
      throw err;
    }
  }

  /** Rule 8. */
  async resendConfirmation(accountId: string): Promise<void> {
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockById(trx, accountId);
      if (!account || account.emailConfirmed || !account.email) return;
      const last = await this.o.store.lastTokenIssuedAt(trx, accountId, 'confirm_email');
      const waitMs = last ? last.getTime() + MAIL_COOLDOWN_MS - this.now().getTime() : 0;
      if (waitMs > 0) throw new TooManyRequestsError('resend_cooldown', 'A confirmation mail went out less than five minutes ago', waitMs / 1000);
      const token = await this.issueToken(trx, accountId, 'confirm_email', account.email);
      await this.o.mailer.enqueue(trx, confirmEmailMail(base, { to: account.email, displayName: account.displayName, userId: accountId, token }));
    });
  }

  /** Rule 9: always 204; a second request for the account within five minutes is dropped. */
  async forgotPassword(emailInput: string): Promise<void> {
    const key = normalizeEmail(emailInput);
    if (!key) return;
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const found = await this.o.store.findByEmail(key, trx);
      if (!found) return;
      const account = await this.o.store.lockById(trx, found.id);
      if (!account?.email) return;
      const last = await this.o.store.lastTokenIssuedAt(trx, account.id, 'reset_password', 'forgot_password');
      if (last && this.now().getTime() - last.getTime() < MAIL_COOLDOWN_MS) return;
      const token = await this.issueToken(trx, account.id, 'reset_password', account.email, 'forgot_password');
      await this.o.mailer.enqueue(trx, resetPasswordMail(base, { to: account.email, displayName: account.displayName, token }));
    });
  }

  /**
   * Rule 10. The token proves the address, so a reset also confirms it, lifts a login lock, spends
   * the account's other reset links and every pending change of address, and rotates the stamp
   * (whoever knew the old password is out).
   */
  async resetPassword(emailInput: string, token: string, newPassword: string): Promise<void> {
    const key = normalizeEmail(emailInput);
    const account = key ? await this.o.store.findByEmail(key) : undefined;
    const query = account && { tokenHash: hashToken(token), purpose: 'reset_password' as const, accountId: account.id, emailNormalized: key };
    // Check the token before the password, so a weak password does not spend a good link.
    if (!account || !query || !(await this.o.store.findLiveToken({ ...query, now: this.now() }))) throw invalidToken();
    await this.checkNewPassword(newPassword, 'password_rejected', 'newPassword');
    const passwordHash = await this.hash(newPassword);
    await this.o.store.transaction(async (trx) => {
      const now = this.now();
      // The row lock orders this after (or before) a change of address being requested right now.
      await this.o.store.lockById(trx, account.id);
      const spent = await this.o.store.spendToken(trx, { ...query, now });
      if (!spent) throw invalidToken();
      await this.o.store.spendAllTokens(trx, account.id, 'reset_password', now);
      await this.spendTakeoverLinks(trx, account.id, now);
      await this.o.store.update(account.id, { passwordHash, emailConfirmed: true, securityStamp: newStamp(this.o.random) }, now, trx);
      await this.o.store.clearLoginFailures(key, trx);
    });
  }
}

function invalidToken(detail = 'The link has expired or was already used'): InputError {
  return new InputError('invalid_token', detail);
}
