import { randomUUID } from 'node:crypto';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { Clock, RandomBytes, SecondFactorGate, SignInCompletion, SignInFactorNotice, StepUpProof } from '@svc/contracts';
import { isPgError, PG } from '@svc/db';
import { AuthenticationError, ConflictError, InputError, type Logger, NotFoundError, TooManyRequestsError, timing } from '@svc/http-kit';
import type { Request } from 'express';
import type { PasskeyResponse } from './models/index.js';
import { FactorSecrets, tokenHash } from './secrets.js';
import type { SignInFactorStore } from './store.js';
import { matchingStep, newTotpSecret, otpauthUrl } from './totp.js';

/** decisions.md §8: an mfaToken lives five minutes. */
export const MFA_TOKEN_LIFETIME_MS = 5 * 60_000;
/** A WebAuthn challenge lives five minutes (the options' timeout), and is used once. */
export const CHALLENGE_LIFETIME_MS = 5 * 60_000;
/**
 * Wrong TOTP codes in a row (over any number of lockouts) after which codes are refused until a
 * recovery code or a password reset (NIST SP 800-63B §5.2.2: at most 100 consecutive failures).
 */
export const TOTP_FAILURE_CAP = 100;
/** decisions.md §8: ten recovery codes. */
export const RECOVERY_CODE_COUNT = 10;
/** ES256 and RS256 (COSE algorithm ids). */
const ALGORITHMS = [-7, -257];

/** Where WebAuthn ceremonies are bound (WEBAUTHN_RP_ID, WEBAUTHN_ORIGINS). */
export interface WebAuthnConfig {
  /** The RP ID: a host name without port (default: PUBLIC_BASE_URL's host). */
  rpId: string;
  /** Origins an assertion or registration may come from (default: PUBLIC_BASE_URL's origin; apps add theirs). */
  origins: string[];
  /** The name authenticators show (default `Meal Planner`). */
  rpName?: string;
}

export interface SignInFactorsServiceOptions {
  store: SignInFactorStore;
  clock: Clock;
  random: RandomBytes;
  logger: Logger;
  /** SESSION_SECRET: keys for sealing TOTP secrets and hashing recovery codes are derived from it. */
  secret: string;
  webauthn: WebAuthnConfig;
  /** From @svc/accounts (wired by the host): finishing a sign-in, the lockout, the account's name and password, notices. */
  accounts: SignInCompletion<Request>;
  /** The issuer the authenticator app shows (default `Meal Planner`). */
  issuer?: string;
}

const invalidCode = (detail = 'The code is wrong, expired or already used') =>
  new InputError('invalid_code', detail, [{ field: 'code', message: 'did not match', in: 'body' }]);
const CAPPED_DETAIL = `${TOTP_FAILURE_CAP} wrong codes in a row: codes are refused until you use a recovery code or reset your password`;
const invalidCredentials = (detail = 'The sign-in could not be verified') => new AuthenticationError('invalid_credentials', detail);

/**
 * TOTP with recovery codes and passkeys, and the second step of a sign-in. It is accounts'
 * SecondFactorGate (asked after every right first factor), and it finishes sign-ins through
 * accounts' SignInCompletion: this package never writes sessions or accounts itself.
 */
export class SignInFactorsService implements SecondFactorGate {
  private readonly secrets: FactorSecrets;
  readonly store: SignInFactorStore;

  constructor(private readonly o: SignInFactorsServiceOptions) {
    this.secrets = new FactorSecrets(o.secret);
    this.store = o.store;
  }

  private now(): Date {
    return this.o.clock.now();
  }

  /** Runs `fn` and writes the notice in one transaction (the mail exists exactly when the change committed). */
  private async notify(
    accountId: string,
    notice: SignInFactorNotice,
    language: string | undefined,
    fn: (trx: import('knex').Knex.Transaction) => Promise<void>,
  ): Promise<void> {
    await this.store.transaction(async (trx) => {
      await fn(trx);
      await this.o.accounts.notify(accountId, notice, trx, language);
    });
  }

  // ---- the gate accounts asks ----

  async demand(accountId: string, method: 'password' | 'google' | 'apple', options: { returnUrl?: string } = {}): Promise<string | undefined> {
    const totp = await this.store.totp(accountId);
    if (!totp?.confirmed) return undefined;
    const token = this.o.random(32).toString('base64url');
    await this.store.insertSignInToken({
      tokenHash: tokenHash(token),
      accountId,
      method,
      returnUrl: options.returnUrl ?? null,
      expiresAt: new Date(this.now().getTime() + MFA_TOKEN_LIFETIME_MS),
    });
    return token;
  }

  summary(accountId: string, trx?: import('@svc/contracts').Transaction): Promise<{ totp: boolean; passkeys: number }> {
    return this.store.summary(accountId, trx as import('knex').Knex.Transaction | undefined);
  }

  async stepUp(accountId: string, proof: StepUpProof, acceptLanguage?: string): Promise<'ok' | 'wrong' | 'none'> {
    if (proof.passkey !== undefined) {
      const { passkeys } = await this.store.summary(accountId);
      if (passkeys === 0) return 'none';
      try {
        const used = await this.verifyAssertion(proof.passkey as unknown as AuthenticationResponseJSON);
        return used === accountId ? 'ok' : 'wrong';
      } catch (err) {
        if (err instanceof AuthenticationError) return 'wrong';
        throw err;
      }
    }
    if (proof.code === undefined && proof.recoveryCode === undefined) return 'none';
    const totp = await this.store.totp(accountId);
    if (!totp?.confirmed) return 'none';
    return (await this.o.accounts.underLockout(accountId, () => this.checkSecondFactor(accountId, proof, acceptLanguage))) ? 'ok' : 'wrong';
  }

  // ---- TOTP ----

  /** POST /me/mfa/totp: a new pending secret (a second POST while pending replaces it); 409 while on. */
  async startTotp(accountId: string): Promise<{ secret: string; otpauthUrl: string }> {
    const profile = await this.o.accounts.profile(accountId);
    if (!profile) throw new AuthenticationError('unauthenticated', 'The account of this session no longer exists');
    const secret = newTotpSecret(this.o.random);
    const sealed = this.secrets.seal(accountId, secret, this.o.random(12));
    if (!(await this.store.putPendingTotp(accountId, sealed, this.now())))
      throw new ConflictError('mfa_already_enabled', 'TOTP is already on; turn it off first to enrol a new authenticator');
    return { secret, otpauthUrl: otpauthUrl(secret, profile.email ?? profile.displayName) };
  }

  /** POST /me/mfa/totp/confirm: the first right code turns TOTP on and answers ten recovery codes; mails a notice. */
  async confirmTotp(accountId: string, code: string, acceptLanguage?: string): Promise<{ recoveryCodes: string[] }> {
    const pending = await this.store.totp(accountId);
    if (!pending) throw invalidCode();
    if (pending.confirmed) throw new ConflictError('mfa_already_enabled', 'TOTP is already on');
    const secret = this.secrets.open(accountId, pending.secretSealed);
    const now = this.now();
    const step = secret === null ? null : matchingStep(secret, code, now);
    if (step === null) throw invalidCode();
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, () => newRecoveryCode(this.o.random));
    await this.notify(accountId, 'totp_enabled', acceptLanguage, async (trx) => {
      if (!(await this.store.useStep(accountId, step, { at: now }, trx))) throw invalidCode();
      await this.store.replaceRecoveryCodes(
        accountId,
        recoveryCodes.map((c) => this.secrets.recoveryCodeHash(c)),
        trx,
      );
    });
    return { recoveryCodes };
  }

  /**
   * DELETE /me/mfa/totp with `{ code }`, `{ recoveryCode }` or `{ passkey }` (an assertion, for an
   * account with a passkey): a fresh second factor, so a stolen session that knows the password
   * cannot turn it off; `{ password }` alone answers 401 `reauthentication_required` (a password
   * sent along is checked too). Every check counts toward the login lockout (423 while locked).
   * Mails a notice.
   */
  async disableTotp(
    accountId: string,
    proof: { code?: string; recoveryCode?: string; password?: string; passkey?: Record<string, unknown> },
    acceptLanguage?: string,
  ): Promise<void> {
    const totp = await this.store.totp(accountId);
    if (!totp?.confirmed) throw new NotFoundError('not_found', 'TOTP is not on');
    if (proof.code === undefined && proof.recoveryCode === undefined && proof.passkey === undefined) {
      if (proof.password === undefined)
        throw new InputError('validation_failed', 'Send code, recoveryCode or passkey', [
          { field: 'code', message: 'code, recoveryCode or passkey is required', in: 'body' },
        ]);
      throw new AuthenticationError(
        'reauthentication_required',
        'Confirm it is you: send a code of your authenticator app, a recovery code or a passkey assertion',
      );
    }
    if (proof.password !== undefined && !(await this.o.accounts.checkPassword(accountId, proof.password)))
      throw new InputError('wrong_current_password', 'The password did not match', [{ field: 'password', message: 'did not match', in: 'body' }]);
    if (proof.passkey !== undefined) {
      if ((await this.stepUp(accountId, { passkey: proof.passkey }, acceptLanguage)) !== 'ok')
        throw new AuthenticationError('reauthentication_required', 'The passkey assertion did not verify');
    } else if (!(await this.o.accounts.underLockout(accountId, () => this.checkSecondFactor(accountId, proof, acceptLanguage)))) {
      throw await this.refusedCode(accountId);
    }
    await this.notify(accountId, 'totp_disabled', acceptLanguage, async (trx) => {
      if (!(await this.store.deleteTotp(accountId, trx))) throw new NotFoundError('not_found', 'TOTP is not on');
    });
  }

  /**
   * A code (its step not used before: replay refused on every instance) or a recovery code (spent
   * by one conditional UPDATE; mails a notice). True when it was right.
   */
  private async checkSecondFactor(accountId: string, proof: { code?: string; recoveryCode?: string }, acceptLanguage: string | undefined): Promise<boolean> {
    const now = this.now();
    if (proof.recoveryCode !== undefined) {
      const hash = this.secrets.recoveryCodeHash(proof.recoveryCode);
      // Spent and noticed in one transaction: no code is used without its mail.
      return this.store.transaction(async (trx) => {
        const spent = await this.store.spendRecoveryCode(accountId, hash, now, trx);
        if (spent) {
          await this.store.resetFailedCodes(accountId, trx);
          await this.o.accounts.notify(accountId, 'recovery_code_used', trx, acceptLanguage);
        }
        return spent;
      });
    }
    const totp = await this.store.totp(accountId);
    // Past the cap no code is even checked: guessing needs a recovery code or the password's reset.
    if (totp?.confirmed && totp.failedCodes >= TOTP_FAILURE_CAP) return false;
    const secret = totp?.confirmed ? this.secrets.open(accountId, totp.secretSealed) : null;
    const step = secret === null || proof.code === undefined ? null : matchingStep(secret, proof.code, now);
    if (step !== null && (await this.store.useStep(accountId, step, undefined))) return true;
    if (totp?.confirmed && (await this.store.countFailedCode(accountId)) === TOTP_FAILURE_CAP) {
      // Exactly the failure that reached the cap mails the notice (parallel failures count one by one).
      await this.store.transaction((trx) => this.o.accounts.notify(accountId, 'totp_codes_blocked', trx, acceptLanguage));
    }
    return false;
  }

  /** The 400 a refused code answers: it says so when codes are refused for the cap. */
  private async refusedCode(accountId: string): Promise<InputError> {
    const totp = await this.store.totp(accountId);
    return totp?.confirmed && totp.failedCodes >= TOTP_FAILURE_CAP ? invalidCode(CAPPED_DETAIL) : invalidCode();
  }

  /** A password reset (accounts asks): the wrong codes' count starts again. */
  async resetCodeFailures(accountId: string, trx?: import('@svc/contracts').Transaction): Promise<void> {
    await this.store.resetFailedCodes(accountId, trx as import('knex').Knex.Transaction | undefined);
  }

  /**
   * POST /auth/mfa: the second step. An unknown, spent or expired token → 401 invalid_credentials;
   * a wrong code → 400 invalid_code, counted toward the lockout, the token not spent; a right one
   * spends the token and signs in with the first factor's method. Answers what login answers.
   */
  async completeSignIn(req: Request, body: { mfaToken: string; code?: string; recoveryCode?: string }): Promise<{ answer: unknown; returnUrl: string | null }> {
    const hash = tokenHash(body.mfaToken);
    const pending = await this.store.liveSignInToken(hash, this.now());
    if (!pending) throw invalidCredentials('The sign-in expired or was already completed; sign in again');
    const ok = await timing.step('second-factor', () =>
      this.o.accounts.underLockout(pending.accountId, () => this.checkSecondFactor(pending.accountId, body, req.get('accept-language'))),
    );
    if (!ok) throw await this.refusedCode(pending.accountId);
    if (!(await this.store.spendSignInToken(hash, this.now()))) throw invalidCredentials('The sign-in expired or was already completed; sign in again');
    const answer = await this.o.accounts.complete(req, pending.accountId, pending.method);
    return { answer, returnUrl: pending.returnUrl };
  }

  async finish(req: unknown, body: { mfaToken: string; code?: string; recoveryCode?: string }): Promise<{ returnUrl: string | null }> {
    return { returnUrl: (await this.completeSignIn(req as Request, body)).returnUrl };
  }

  /** Whether the token is live (the verify page asks before it shows the form). */
  async pendingSignIn(mfaToken: string): Promise<boolean> {
    return (await this.store.liveSignInToken(tokenHash(mfaToken), this.now())) !== undefined;
  }

  // ---- passkeys ----

  private async newChallenge(purpose: 'registration' | 'authentication', accountId: string | null): Promise<string> {
    const challenge = this.o.random(32).toString('base64url');
    const now = this.now();
    if (!(await this.store.insertChallenge({ challenge, purpose, accountId, expiresAt: new Date(now.getTime() + CHALLENGE_LIFETIME_MS) }, { now })))
      throw new TooManyRequestsError('rate_limited', 'Too many passkey sign-ins are under way; try again in a minute', 60);
    return challenge;
  }

  /** POST /me/passkeys/options: creation options (top-level JSON) over a single-use challenge. */
  async registrationOptions(accountId: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const profile = await this.o.accounts.profile(accountId);
    if (!profile) throw new AuthenticationError('unauthenticated', 'The account of this session no longer exists');
    const challenge = await this.newChallenge('registration', accountId);
    return generateRegistrationOptions({
      rpName: this.o.webauthn.rpName ?? 'Meal Planner',
      rpID: this.o.webauthn.rpId,
      userName: profile.email ?? profile.displayName,
      userDisplayName: profile.displayName,
      userID: uuidBytes(accountId),
      challenge: Buffer.from(challenge, 'base64url'),
      timeout: CHALLENGE_LIFETIME_MS,
      attestationType: 'none',
      excludeCredentials: (await this.store.credentialIds(accountId)).map((id) => ({ id })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
      supportedAlgorithmIDs: ALGORITHMS,
    });
  }

  /** POST /me/passkeys: verifies the registration (400 validation_failed when it does not) and stores the passkey; mails a notice. */
  async register(accountId: string, name: string, response: RegistrationResponseJSON, acceptLanguage?: string): Promise<PasskeyResponse> {
    const refused = (why: string) =>
      new InputError('validation_failed', `The passkey registration did not verify: ${why}`, [{ field: 'response', message: why, in: 'body' }]);
    let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: (challenge) => this.store.takeChallenge(challenge, 'registration', accountId, this.now()),
        expectedOrigin: this.o.webauthn.origins,
        expectedRPID: this.o.webauthn.rpId,
        requireUserVerification: false,
        supportedAlgorithmIDs: ALGORITHMS,
      });
    } catch (err) {
      throw refused((err as Error).message);
    }
    if (!verified.verified) throw refused('not verified');
    const { credential } = verified.registrationInfo;
    let created: PasskeyResponse | undefined;
    try {
      await this.notify(accountId, 'passkey_added', acceptLanguage, async (trx) => {
        created = await this.store.insertPasskey(
          {
            id: randomUUID(),
            accountId,
            credentialId: credential.id,
            publicKey: Buffer.from(credential.publicKey),
            counter: credential.counter,
            transports: credential.transports ?? response.response.transports ?? null,
            name,
            createdAt: this.now(),
          },
          trx,
        );
      });
    } catch (err) {
      if (isPgError(err, PG.uniqueViolation)) throw refused('this passkey is already registered');
      throw err;
    }
    return created!;
  }

  list(accountId: string): Promise<PasskeyResponse[]> {
    return this.store.passkeys(accountId);
  }

  /** DELETE /me/passkeys/{id}: 404 when not the caller's; 409 last_sign_in_method when it is the last way in. Mails a notice. */
  async remove(accountId: string, passkeyId: string, acceptLanguage?: string): Promise<void> {
    await this.notify(accountId, 'passkey_removed', acceptLanguage, async (trx) => {
      // The account row locked first: a provider unlinked at the same moment (which locks it too
      // and counts passkeys) cannot take the other last way in.
      const profile = await this.o.accounts.profile(accountId, trx);
      if (!profile) throw new AuthenticationError('unauthenticated', 'The account of this session no longer exists');
      if (!(await this.store.deletePasskey(accountId, passkeyId, trx))) throw new NotFoundError('not_found', 'You have no passkey with this id');
      const { passkeys } = await this.store.summary(accountId, trx);
      if (passkeys + profile.otherSignInMethods < 1)
        throw new ConflictError('last_sign_in_method', 'This is your only way to sign in; set a password or link another provider first');
    });
  }

  /** POST /auth/passkey/options: request options for discoverable credentials, over a single-use challenge. */
  async authenticationOptions(): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const challenge = await this.newChallenge('authentication', null);
    return generateAuthenticationOptions({
      rpID: this.o.webauthn.rpId,
      challenge: Buffer.from(challenge, 'base64url'),
      timeout: CHALLENGE_LIFETIME_MS,
      userVerification: 'preferred',
    });
  }

  /**
   * Verifies an assertion: its challenge is taken first (single use, whatever follows), then the
   * credential, signature, origin, RP ID and counter. Answers the account; 401 invalid_credentials
   * for anything that does not verify.
   */
  private async verifyAssertion(response: AuthenticationResponseJSON): Promise<string> {
    const challenge = clientChallenge(response);
    if (!challenge || !(await this.store.takeChallenge(challenge, 'authentication', null, this.now()))) throw invalidCredentials();
    const stored = typeof response.id === 'string' ? await this.store.passkeyByCredential(response.id) : undefined;
    if (!stored) throw invalidCredentials();
    let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
    try {
      verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: this.o.webauthn.origins,
        expectedRPID: this.o.webauthn.rpId,
        credential: {
          id: stored.credentialId,
          publicKey: new Uint8Array(stored.publicKey),
          counter: stored.counter,
          transports: stored.transports ?? undefined,
        },
        requireUserVerification: false,
      });
    } catch (err) {
      this.o.logger.info({ reason: (err as Error).message }, 'passkey assertion refused');
      throw invalidCredentials();
    }
    if (!verified.verified) throw invalidCredentials();
    if (!(await this.store.usePasskey(stored.id, stored.counter, verified.authenticationInfo.newCounter, this.now()))) throw invalidCredentials();
    return stored.accountId;
  }

  /** POST /auth/passkey: signs in (method `passkey`, no second step, a lock does not stop it). */
  async signInWithPasskey(req: Request, response: AuthenticationResponseJSON): Promise<unknown> {
    const accountId = await timing.step('verify-passkey', () => this.verifyAssertion(response));
    return this.o.accounts.complete(req, accountId, 'passkey');
  }

  /** Deletes spent and expired tokens and challenges (the host's housekeeping). */
  prune(): Promise<number> {
    return this.store.prune(this.now());
  }
}

/** A recovery code: 10 characters of base32 (50 bits), shown as xxxxx-xxxxx. */
function newRecoveryCode(random: RandomBytes): string {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  const bytes = random(10);
  const chars = [...bytes].map((b) => alphabet[b & 31]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

function uuidBytes(id: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(id.replace(/-/g, ''), 'hex'));
}

/** The challenge the client signed (from clientDataJSON), or undefined when the response is not shaped like an assertion. */
function clientChallenge(response: AuthenticationResponseJSON): string | undefined {
  try {
    const clientData = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof clientData.challenge === 'string' && clientData.challenge.length <= 200 ? clientData.challenge : undefined;
  } catch {
    return undefined;
  }
}
