import type { Clock, RandomBytes } from '@svc/contracts';
import { isPgError, PG } from '@svc/db';
import { InputError, LockedError, type Logger, TooManyRequestsError, timing } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { Account, AccountStore, NewToken } from './AccountStore.js';
import { looksLikeAddress, normalizeEmail, tidyEmail } from './email.js';
import { type Mailer, outboxRow } from './Mailer.js';
import {
  accountExistsMail,
  changeEmailMail,
  changeEmailNoticeMail,
  confirmEmailMail,
  emailChangedNoticeMail,
  identityLinkedNoticeMail,
  type MailContent,
  passwordChangedNoticeMail,
  passwordResetNoticeMail,
  resetPasswordMail,
} from './mail-templates.js';
import type { PasswordHasher } from './PasswordHasher.js';
import { type BreachChecker, PASSWORD_RULES, passwordTooShort } from './passwords.js';
import { hashToken, newStamp, newToken, TOKEN_LIFETIME_MS, type TokenPurpose } from './tokens.js';

/** Resend-confirmation cooldown and the forgot-password duplicate window (spec, Limits). */
export const MAIL_COOLDOWN_MS = 5 * 60_000;

/**
 * Unasked mail (an "account already exists" mail, a reset link, a confirmation link, a change-of-
 * address link) per recipient address and per client IP in a window, counted in PostgreSQL so every
 * instance shares it. Past the limit the mail is dropped silently: the answer stays the same.
 */
export interface UnaskedMailLimits {
  perRecipient: number;
  perIp: number;
  windowMs: number;
}
export const UNASKED_MAIL_LIMITS: UnaskedMailLimits = { perRecipient: 5, perIp: 30, windowMs: 3600_000 };

/** Where a request came from (the per-IP limit of unasked mail). */
export interface RequestOrigin {
  ip?: string;
}

/** Every mailed link a password or address change retires. */
const ALL_LINKS = ['confirm_email', 'change_email', 'reset_password'] as const satisfies readonly TokenPurpose[];

/** A placeholder account id where no account was found (statements that then write nothing). */
const NO_ACCOUNT = '00000000-0000-0000-0000-000000000000';

/** The lockout key of an account: its address, shared with login by address; an account without one by its id. */
export function lockoutKey(account: Pick<Account, 'id' | 'emailNormalized'>): string {
  return account.emailNormalized ?? `account:${account.id}`;
}

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
  /** Default UNASKED_MAIL_LIMITS. */
  unaskedMail?: UnaskedMailLimits;
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

  /** A new token for a mailed link and its row (written by `writeMail`, which retires the older ones). */
  private newTokenRow(accountId: string, purpose: TokenPurpose, email: string, origin?: NewToken['origin']): { token: string; row: NewToken } {
    const token = newToken(this.o.random);
    const now = this.now();
    return {
      token,
      row: {
        accountId,
        purpose,
        tokenHash: hashToken(token),
        email,
        emailNormalized: normalizeEmail(email),
        origin,
        createdAt: now,
        expiresAt: new Date(now.getTime() + TOKEN_LIFETIME_MS[purpose]),
      },
    };
  }

  /** One statement whether or not it sends (see AccountStore.writeMail). */
  private writeMail(trx: Knex.Transaction, send: boolean, mail: MailContent, token?: NewToken): Promise<void> {
    return this.o.store.writeMail(trx, { send, token, mail: outboxRow(mail), now: this.now() });
  }

  /**
   * Counts a request for unasked mail to `recipient` (and from `origin.ip`) and answers whether it
   * may go out. Always one statement, whatever the caller then does with the answer.
   */
  private async unaskedMailAllowed(trx: Knex.Transaction, recipient: string, origin: RequestOrigin, kind: string): Promise<boolean> {
    const limits = this.o.unaskedMail ?? UNASKED_MAIL_LIMITS;
    const to = `to:${recipient}`;
    const ip = origin.ip ? `ip:${origin.ip}` : undefined;
    const counts = await this.o.store.countUnaskedMail(trx, ip ? [to, ip] : [to], limits.windowMs, this.now());
    const allowed = (counts.get(to) ?? 0) <= limits.perRecipient && (!ip || (counts.get(ip) ?? 0) <= limits.perIp);
    // No address in the log line: which address is being flooded is nobody's business but its owner's.
    if (!allowed) this.o.logger.info({ kind }, 'unasked mail limit reached; mail dropped');
    return allowed;
  }

  /** Every open link of the account dies with a change of its password or address. */
  private retireAllLinks(trx: Knex.Transaction, accountId: string, now: Date): Promise<void> {
    return this.o.store.retireTokens(trx, accountId, ALL_LINKS, now);
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
        trx,
        { email, emailNormalized, displayName, passwordHash, emailConfirmed: false, securityStamp: newStamp(this.o.random) },
        this.now(),
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
      await this.unaskedMailAllowed(trx, emailNormalized, origin, 'confirm_email');
      const { token, row } = this.newTokenRow(created.id, 'confirm_email', email);
      await this.writeMail(trx, true, confirmEmailMail(base, { to: email, displayName, userId: created.id, token }), row);
      return created;
    });
  }

  /**
   * Every password check goes through here: login, the current password of a change, and any
   * re-authentication (e.g. deleting the account). `who` is an address (login: an unknown address
   * walks the same path, costs the same statements and one bcrypt) or an account as the caller read
   * it. A failure slot is reserved in PostgreSQL BEFORE the hash is checked (one statement, shared
   * by every instance), so at most LOCKOUT_MAX_FAILURES passwords are checked per lock window
   * however many arrive at once; while the lock runs every attempt, the right password included,
   * is refused with 423 `account_locked` before any check. A right password gives its slot back
   * (the count starts again). Answers the account, or undefined for a wrong address or password.
   * An account is keyed by its address (so login and re-authentication share one count), or by
   * its id when it has none.
   */
  async verifyPasswordWithLockout(who: Account | string, password: string): Promise<Account | undefined> {
    const key = typeof who === 'string' ? normalizeEmail(who) : lockoutKey(who);
    const now = this.now();
    const slot = await this.o.store.reserveLoginAttempt(key, this.o.lockoutMaxFailures, new Date(now.getTime() + this.o.lockoutSeconds * 1000), now);
    if (!slot) {
      // Retry-After: the seconds left of the lock (a reset lifts it sooner).
      const until = await this.o.store.lockEnd(key);
      const wait = until ? Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000)) : this.o.lockoutSeconds;
      throw new LockedError('account_locked', 'Too many wrong passwords; this account is locked for a few minutes, or until its password is reset', {
        headers: { 'Retry-After': String(wait) },
      });
    }
    const account = typeof who === 'string' ? await this.o.store.findByEmail(key) : who;
    const ok = await timing.step('hash-password', () => this.o.hasher.verifyOrBurn(password, account?.passwordHash));
    if (!ok || !account) return undefined;
    await this.o.store.releaseLoginAttempt(key, slot.lockedUntil);
    return account;
  }

  /** Rule 4 (login): `verifyPasswordWithLockout` by address. */
  verifyLogin(emailInput: string, password: string): Promise<Account | undefined> {
    return this.verifyPasswordWithLockout(emailInput, password);
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
   * Rule 1. Answers the new security stamp; the caller re-issues its own session with it. The
   * current password is checked under the lockout, like a login (423 while locked). A new password
   * retires every open mailed link of the account (reset, confirm, change of address) and mails
   * the holder a notice.
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
      if (!(await this.verifyPasswordWithLockout(account, currentPassword)))
        throw new InputError('wrong_current_password', 'The current password did not match', [
          { field: 'currentPassword', message: 'did not match', in: 'body' },
        ]);
    }
    await this.checkNewPassword(newPassword, 'password_rejected', 'newPassword');
    const passwordHash = await this.hash(newPassword);
    const securityStamp = newStamp(this.o.random);
    return this.withMail(async (trx) => {
      const now = this.now();
      // The row lock orders this after (or before) a change of address being requested right now.
      const locked = await this.o.store.lockById(trx, accountId);
      if (!locked) return undefined;
      const updated = await this.o.store.update(accountId, { passwordHash, securityStamp }, now, trx);
      await this.retireAllLinks(trx, accountId, now);
      const to = locked.email ?? '';
      await this.writeMail(trx, locked.email !== null, passwordChangedNoticeMail(this.o.publicBaseUrl, { to, displayName: locked.displayName }));
      return updated?.securityStamp;
    });
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
  async adoptByVerifiedAddress(
    accountId: string,
    link: (trx: Knex.Transaction, account: Account) => Promise<void>,
    providerName = 'Another sign-in',
  ): Promise<Account | undefined> {
    return this.withMail(async (trx) => {
      const account = await this.o.store.lockById(trx, accountId);
      if (!account) return undefined;
      let adopted: Account | undefined = account;
      if (!account.emailConfirmed) {
        const now = this.now();
        adopted = await this.o.store.update(accountId, { emailConfirmed: true, passwordHash: null, securityStamp: newStamp(this.o.random) }, now, trx);
        // Links the squatter asked for (a change of address to one of theirs) must not outlive them.
        await this.retireAllLinks(trx, accountId, now);
      }
      if (!adopted) return undefined;
      await link(trx, adopted);
      // The holder hears of every new way into their account.
      if (adopted.email)
        await this.writeMail(
          trx,
          true,
          identityLinkedNoticeMail(this.o.publicBaseUrl, { to: adopted.email, displayName: adopted.displayName, provider: providerName }),
        );
      return adopted;
    });
  }

  /**
   * Rule 2. Always 204 for a well-formed address; whether it is taken is never revealed, not even
   * by the work done: a taken address costs the same statements (its link is simply not written).
   * The link to the new address counts as unasked mail there; the heads-up to the old address is
   * always sent.
   */
  async requestEmailChange(accountId: string, newEmailInput: string, origin: RequestOrigin = {}): Promise<void> {
    if (!looksLikeAddress(newEmailInput))
      throw new InputError('email_not_an_address', 'That does not look like an e-mail address', [
        { field: 'newEmail', message: 'is not an e-mail address', in: 'body' },
      ]);
    const newEmail = tidyEmail(newEmailInput);
    const newNormalized = normalizeEmail(newEmail);
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockById(trx, accountId);
      if (!account) return;
      // A taken address gets no link (it could never be confirmed); the answer is the same.
      const taken = await this.o.store.emailTaken(newNormalized, accountId, trx);
      const allowed = await this.unaskedMailAllowed(trx, newNormalized, origin, 'change_email');
      const change = this.newTokenRow(accountId, 'change_email', newEmail);
      await this.writeMail(
        trx,
        !taken && allowed,
        changeEmailMail(base, { to: newEmail, displayName: account.displayName, userId: accountId, token: change.token }),
        change.row,
      );
      const oldAddress = account.email ?? newEmail;
      const reset = this.newTokenRow(accountId, 'reset_password', oldAddress, 'email_change_notice');
      await this.writeMail(
        trx,
        account.email !== null,
        changeEmailNoticeMail(base, { to: oldAddress, displayName: account.displayName, newEmail, token: reset.token }),
        reset.row,
      );
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
      return await this.withMail(async (trx) => {
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
        const now = this.now();
        await this.o.store.update(userId, { email: spent.email, emailNormalized, emailConfirmed: true, securityStamp }, now, trx);
        // Every other open link (the old address's heads-up reset link included) was issued for
        // the address that is now gone.
        await this.retireAllLinks(trx, userId, now);
        // The notice goes to the OLD address: the one person who may not have wanted this.
        const oldAddress = account.email ?? spent.email;
        await this.writeMail(
          trx,
          account.email !== null && account.emailNormalized !== emailNormalized,
          emailChangedNoticeMail({ to: oldAddress, displayName: account.displayName, newEmail: spent.email }),
        );
        return securityStamp;
      });
    } catch (err) {
      // Two accounts confirming the same new address at once: the unique key lets one through.
      if (isPgError(err, PG.uniqueViolation)) throw invalidToken('That address now belongs to another account');
      throw err;
    }
  }

  /**
   * Rule 8. A confirmed address costs the same statements as one that is mailed; the mail counts
   * as unasked mail to the address. 429 within five minutes of the last confirmation link.
   */
  async resendConfirmation(accountId: string, origin: RequestOrigin = {}): Promise<void> {
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockById(trx, accountId);
      if (!account) return;
      const wanted = !account.emailConfirmed && account.email !== null;
      const last = await this.o.store.lastTokenIssuedAt(trx, accountId, 'confirm_email');
      const waitMs = last ? last.getTime() + MAIL_COOLDOWN_MS - this.now().getTime() : 0;
      if (wanted && waitMs > 0) throw new TooManyRequestsError('resend_cooldown', 'A confirmation mail went out less than five minutes ago', waitMs / 1000);
      const allowed = await this.unaskedMailAllowed(trx, lockoutKey(account), origin, 'confirm_email');
      const to = account.email ?? '';
      const { token, row } = this.newTokenRow(accountId, 'confirm_email', to);
      await this.writeMail(trx, wanted && allowed, confirmEmailMail(base, { to, displayName: account.displayName, userId: accountId, token }), row);
    });
  }

  /**
   * Rule 9: always 204; a second request for the account within five minutes is dropped, and so
   * is unasked mail past the per-address and per-IP limits. An address without an account runs
   * the same four statements and renders the same mail, which is then not written.
   */
  async forgotPassword(emailInput: string, origin: RequestOrigin = {}): Promise<void> {
    const key = normalizeEmail(emailInput);
    if (!key) return;
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockByEmail(trx, key);
      const allowed = await this.unaskedMailAllowed(trx, key, origin, 'reset_password');
      const last = await this.o.store.lastTokenIssuedAt(trx, account?.id ?? NO_ACCOUNT, 'reset_password', 'forgot_password');
      const duplicate = last !== undefined && this.now().getTime() - last.getTime() < MAIL_COOLDOWN_MS;
      const to = account?.email ?? tidyEmail(emailInput);
      const { token, row } = this.newTokenRow(account?.id ?? NO_ACCOUNT, 'reset_password', to, 'forgot_password');
      await this.writeMail(
        trx,
        account?.email != null && allowed && !duplicate,
        resetPasswordMail(base, { to, displayName: account?.displayName ?? '', token }),
        row,
      );
    });
  }

  /**
   * Rule 10. The token proves the address, so a reset also confirms it, lifts a login lock,
   * retires every other open link of the account (reset, confirm, change of address), rotates the
   * stamp (whoever knew the old password is out) and mails the holder a notice.
   */
  async resetPassword(emailInput: string, token: string, newPassword: string): Promise<void> {
    const key = normalizeEmail(emailInput);
    const account = key ? await this.o.store.findByEmail(key) : undefined;
    const query = account && { tokenHash: hashToken(token), purpose: 'reset_password' as const, accountId: account.id, emailNormalized: key };
    // Check the token before the password, so a weak password does not spend a good link.
    if (!account || !query || !(await this.o.store.findLiveToken({ ...query, now: this.now() }))) throw invalidToken();
    await this.checkNewPassword(newPassword, 'password_rejected', 'newPassword');
    const passwordHash = await this.hash(newPassword);
    await this.withMail(async (trx) => {
      const now = this.now();
      // The row lock orders this after (or before) a change of address being requested right now.
      const locked = await this.o.store.lockById(trx, account.id);
      const spent = await this.o.store.spendToken(trx, { ...query, now });
      if (!spent || !locked) throw invalidToken();
      await this.retireAllLinks(trx, account.id, now);
      await this.o.store.update(account.id, { passwordHash, emailConfirmed: true, securityStamp: newStamp(this.o.random) }, now, trx);
      await this.o.store.clearLoginFailures(key, trx);
      await this.writeMail(trx, true, passwordResetNoticeMail(this.o.publicBaseUrl, { to: locked.email ?? spent.email, displayName: locked.displayName }));
    });
  }
}

function invalidToken(detail = 'The link has expired or was already used'): InputError {
  return new InputError('invalid_token', detail);
}
