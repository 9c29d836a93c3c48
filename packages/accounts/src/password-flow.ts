import { InputError, LockedError, timing } from '@svc/http-kit';
import { AccountFlow, invalidToken, lockoutKey, MAIL_COOLDOWN_MS, NO_ACCOUNT, type RequestOrigin } from './account-flow.js';
import { looksLikeAddress, normalizeEmail, tidyEmail } from './email.js';
import { passwordChangedNoticeMail, passwordResetNoticeMail, resetPasswordMail } from './mail-templates.js';
import type { Account } from './store.js';
import { hashToken, newStamp } from './tokens.js';

/** Passwords: the check under the login lockout (login, re-authentication), the change, logout's new stamp, the reset by mail (rules 1, 4, 5, 9, 10). */
export class PasswordFlow extends AccountFlow {
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
    return (await this.checkPasswordUnderLockout(who, password))?.account;
  }

  /** Reserves a failure slot of `key`, or throws 423 `account_locked` (Retry-After: the seconds left). */
  private async reserveOrLock(key: string): Promise<{ lockedUntil: Date | null }> {
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
    return slot;
  }

  /**
   * verifyPasswordWithLockout, and for a login the second step: `secondStep` is asked once the
   * password is right; when it answers an mfaToken the attempt gives its failure back without
   * resetting the count (only the completed second step resets it).
   */
  private async checkPasswordUnderLockout(
    who: Account | string,
    password: string,
    secondStep?: (account: Account) => Promise<string | undefined>,
  ): Promise<{ account: Account; mfaToken?: string } | undefined> {
    const key = typeof who === 'string' ? normalizeEmail(who) : lockoutKey(who);
    const slot = await this.reserveOrLock(key);
    const account = typeof who === 'string' ? await this.o.store.findByEmail(key) : who;
    const ok = await timing.step('hash-password', () => this.o.hasher.verifyOrBurn(password, account?.passwordHash));
    if (!ok || !account) return undefined;
    const mfaToken = secondStep ? await secondStep(account) : undefined;
    if (mfaToken) await this.o.store.returnLoginAttempt(key, slot.lockedUntil);
    else await this.o.store.releaseLoginAttempt(key, slot.lockedUntil);
    if (ok === 'legacy') {
      // A hash from before passwords were normalised, of a password NFKC changes: from now on the
      // normalised form is stored (only if the hash is still the one that was checked).
      const passwordHash = await this.hash(password);
      await this.o.store.replacePasswordHash(account.id, account.passwordHash!, passwordHash, this.now());
    }
    return { account, mfaToken };
  }

  /**
   * POST /auth/login: the account, and the mfaToken when TOTP is on (then no session is made and
   * the lockout count is not reset).
   */
  login(emailInput: string, password: string): Promise<{ account: Account; mfaToken?: string } | undefined> {
    return this.checkPasswordUnderLockout(emailInput, password, (account) => this.secondStepFor(account.id, 'password'));
  }

  /** Rule 4 (login): `verifyPasswordWithLockout` by address. */
  verifyLogin(emailInput: string, password: string): Promise<Account | undefined> {
    return this.verifyPasswordWithLockout(emailInput, password);
  }

  /**
   * A second-factor check under the account's login lockout (the same key and count as its
   * passwords): a slot is reserved before the check (423 while locked), kept when the check fails,
   * and a passed check resets the count.
   */
  async underLockout(accountId: string, check: () => Promise<boolean>): Promise<boolean> {
    const account = await this.o.store.findById(accountId);
    if (!account) return false;
    const key = lockoutKey(account);
    const slot = await this.reserveOrLock(key);
    const ok = await check();
    if (ok) await this.o.store.releaseLoginAttempt(key, slot.lockedUntil);
    return ok;
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
      const locked = await this.o.store.lockById(accountId, trx);
      if (!locked) return undefined;
      const updated = await this.o.store.update(accountId, { passwordHash, securityStamp }, now, trx);
      await this.retireAllLinks(trx, accountId, now);
      // A new password ends every personal access token (decisions.md §8).
      await this.o.accessTokens.endAll(accountId, trx);
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
   * Rule 9: always 204; a second request for the account within five minutes is dropped, and so
   * is unasked mail past the per-address and per-IP limits. An address without an account runs
   * the same four statements and renders the same mail, which is then not written.
   */
  async forgotPassword(emailInput: string, origin: RequestOrigin = {}): Promise<void> {
    // Only an address in the documented form is ever mailed (register and change of address
    // accept no other): anything else has no account to reset and gets the same 204.
    if (!looksLikeAddress(emailInput)) return;
    const key = normalizeEmail(emailInput);
    const base = this.o.publicBaseUrl;
    await this.withMail(async (trx) => {
      const account = await this.o.store.lockByEmail(key, trx);
      const allowed = await this.unaskedMailAllowed(trx, key, origin, 'reset_password');
      const last = await this.o.store.lastTokenIssuedAt({ accountId: account?.id ?? NO_ACCOUNT, purpose: 'reset_password', origin: 'forgot_password' }, trx);
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
      const locked = await this.o.store.lockById(account.id, trx);
      const spent = await this.o.store.spendToken({ ...query, now }, trx);
      if (!spent || !locked) throw invalidToken();
      await this.retireAllLinks(trx, account.id, now);
      await this.o.accessTokens.endAll(account.id, trx);
      await this.o.store.update(account.id, { passwordHash, emailConfirmed: true, securityStamp: newStamp(this.o.random) }, now, trx);
      await this.o.store.clearLoginFailures(key, trx);
      // Codes blocked by the cap of wrong TOTP codes work again after a reset by mail.
      await this.o.secondFactors()?.resetCodeFailures?.(account.id, trx);
      await this.writeMail(trx, true, passwordResetNoticeMail(this.o.publicBaseUrl, { to: locked.email ?? spent.email, displayName: locked.displayName }));
    });
  }
}
