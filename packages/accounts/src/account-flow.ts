import type { Clock, RandomBytes, SecondFactorGate } from '@svc/contracts';
import { InputError, type Logger, timing } from '@svc/http-kit';
import type { Knex } from 'knex';
import type { AccessTokenService } from './access-token-service.js';
import { normalizeEmail } from './email.js';
import { type Mailer, outboxRow } from './Mailer.js';
import type { MailContent } from './mail-templates.js';
import { normalizePassword, type PasswordHasher } from './PasswordHasher.js';
import { type BreachChecker, PASSWORD_RULES, passwordTooShort } from './passwords.js';
import type { Account, AccountStore, NewToken } from './store.js';
import { hashToken, newToken, TOKEN_LIFETIME_MS, type TokenPurpose } from './tokens.js';

/** Resend-confirmation cooldown and the forgot-password duplicate window (spec, Limits). */
export const MAIL_COOLDOWN_MS = 5 * 60_000;

/**
 * Unasked mail (an "account already exists" mail, a reset link, a confirmation link, a change-of-
 * address link) per recipient address and per client IP in a window, counted in PostgreSQL so every
 * instance shares it. Past the limit the mail is dropped silently: the answer stays the same.
 * `perRecipient` counts requests for mail to one canonical address (UNASKED_MAIL_PER_ADDRESS);
 * `perIp` counts the DISTINCT addresses one client IP had mail sent to (UNASKED_MAIL_PER_IP): it
 * stops one client spraying many addresses, not many people behind one shared address each
 * resetting their own.
 */
export interface UnaskedMailLimits {
  perRecipient: number;
  perIp: number;
  windowMs: number;
}
export const UNASKED_MAIL_LIMITS: UnaskedMailLimits = { perRecipient: 5, perIp: 100, windowMs: 3600_000 };

/** Where the service counts what it does not answer (the host passes http-kit's `Metrics`). */
export interface AccountsMetrics {
  /** Unasked mail dropped by a limit, by mail kind and by which limit (`address` or `ip`). */
  unaskedMailDropped: { inc(labels: { kind: string; limit: string }): void };
}

/** Where a request came from (the per-IP limit of unasked mail). */
export interface RequestOrigin {
  ip?: string;
}

/** Every mailed link a password or address change retires. */
const ALL_LINKS = ['confirm_email', 'change_email', 'reset_password'] as const satisfies readonly TokenPurpose[];

/** A placeholder account id where no account was found (statements that then write nothing). */
export const NO_ACCOUNT = '00000000-0000-0000-0000-000000000000';

/** The lockout key of an account: its address, shared with login by address; an account without one by its id. */
export function lockoutKey(account: Pick<Account, 'id' | 'emailNormalized'>): string {
  return account.emailNormalized ?? `account:${account.id}`;
}

/** What the account rules use (built by AccountService from AccountServiceOptions). */
export interface AccountParts {
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
  unaskedMail: UnaskedMailLimits;
  metrics?: AccountsMetrics;
  /** Every personal access token of an account ends with a new password or a taken-over address. */
  accessTokens: Pick<AccessTokenService, 'endAll'>;
  /** The second factors, once the host handed them in (`useSecondFactors`). */
  secondFactors: () => SecondFactorGate | undefined;
}

/** A password for a new account, change or reset: its form first, then the breach list. */
export type PasswordRefusalCode = 'signup_rejected' | 'password_rejected';

export function invalidToken(detail = 'The link has expired or was already used'): InputError {
  return new InputError('invalid_token', detail);
}

/**
 * What every account flow shares (sign-up and mailed links, passwords, change of address, social
 * accounts): the parts, and the mailed links' and new passwords' rules. Each flow is a subclass.
 */
export class AccountFlow {
  constructor(protected readonly o: AccountParts) {}

  now(): Date {
    return this.o.clock.now();
  }

  async checkNewPassword(typed: string, code: PasswordRefusalCode, field: string): Promise<void> {
    // The rules and the breach list judge what is stored: the NFKC form.
    const password = normalizePassword(typed);
    if (passwordTooShort(password)) throw new InputError(code, PASSWORD_RULES, [{ field, message: 'must be at least 8 characters', in: 'body' }]);
    if (await timing.step('breach-check', () => this.o.breach.isPwned(password))) {
      throw new InputError('password_pwned', 'This password has been seen in a data breach; choose another', [
        { field, message: 'has been seen in a data breach', in: 'body' },
      ]);
    }
  }

  hash(password: string): Promise<string> {
    return timing.step('hash-password', () => this.o.hasher.hash(password));
  }

  /** A new token for a mailed link and its row (written by `writeMail`, which retires the older ones). */
  newTokenRow(accountId: string, purpose: TokenPurpose, email: string, origin?: NewToken['origin']): { token: string; row: NewToken } {
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
  writeMail(trx: Knex.Transaction, send: boolean, mail: MailContent, token?: NewToken): Promise<void> {
    return this.o.store.writeMail({ send, token, mail: outboxRow(mail), now: this.now() }, trx);
  }

  /**
   * Counts a request for unasked mail to `recipient` (and from `origin.ip`) and answers whether it
   * may go out. Always one statement, whatever the caller then does with the answer.
   */
  async unaskedMailAllowed(trx: Knex.Transaction, recipient: string, origin: RequestOrigin, kind: string, enforced = true): Promise<boolean> {
    const limits = this.o.unaskedMail;
    const counts = await this.o.store.countUnaskedMail({ recipient, ip: origin.ip, perIp: limits.perIp }, limits.windowMs, this.now(), trx);
    const limit = counts.recipientCount > limits.perRecipient ? 'address' : counts.ipAllowed === false ? 'ip' : undefined;
    if (limit && enforced) {
      // No address in the log line (which address is being flooded is nobody's business but its
      // owner's): its domain only, enough to see a campaign against one provider.
      this.o.logger.warn(
        { kind, limit, domain: recipient.includes('@') ? recipient.slice(recipient.lastIndexOf('@') + 1) : null },
        'unasked mail limit reached; mail dropped',
      );
      this.o.metrics?.unaskedMailDropped.inc({ kind, limit });
    }
    return limit === undefined;
  }

  /** Every open link of the account dies with a change of its password or address. */
  retireAllLinks(trx: Knex.Transaction, accountId: string, now: Date): Promise<void> {
    return this.o.store.retireTokens(accountId, ALL_LINKS, now, trx);
  }

  /** Runs `fn` in a transaction and, once it committed, nudges this instance's job runner (mail goes out at once, not at its next poll). */
  async withMail<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    const result = await this.o.store.transaction(fn);
    this.o.mailer.nudge();
    return result;
  }

  /**
   * After a right first factor: the mfaToken of a second step when one is due (TOTP on), else
   * undefined (sign in now).
   */
  secondStepFor(accountId: string, method: 'password' | 'google' | 'apple', options: { returnUrl?: string } = {}): Promise<string | undefined> {
    const gate = this.o.secondFactors();
    return gate ? timing.step('second-factor-gate', () => gate.demand(accountId, method, options)) : Promise.resolve(undefined);
  }
}
