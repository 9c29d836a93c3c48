import type { Clock } from '@svc/contracts';
import { createRemoteJWKSet, customFetch, errors, type JWTPayload, jwtVerify } from 'jose';

/** The identity token was not vouched for: bad signature, key, alg, iss, aud, expired, malformed. */
export class IdTokenRejectedError extends Error {}

/** Apple's keys could not be fetched (unreachable, slow, not a JWKS): nobody can say whether the token is good. */
export class KeysUnavailableError extends Error {}

export interface AppleTokenVerifierOptions {
  keysUrl: string;
  issuer: string;
  clock: Clock;
  fetch?: typeof fetch;
  /** How long one JWKS fetch may take (default 5000 ms). */
  timeoutMs?: number;
  /** After a fetch, an unknown key id does not trigger another one for this long (default 30 s): a stream of made-up kids cannot hammer Apple. */
  cooldownMs?: number;
  /** Keys are refetched after this long even when every kid is known (default 10 min). */
  cacheMaxAgeMs?: number;
}

/** Claims of an Apple identity token this service reads. */
export interface AppleClaims extends JWTPayload {
  sub: string;
  email?: string;
  email_verified?: boolean | string;
  nonce?: string;
}

/**
 * Checks Apple identity tokens (web id_token and native identityToken) with jose: RS256 only,
 * signed by a key of APPLE_KEYS_URL, `iss` = APPLE_ISSUER, `aud` one of the given audiences,
 * not expired (on the injected clock), with a `sub`. The key set is jose's remote JWKS: cached,
 * refetched when a token names a key id it does not know (Apple rotates keys), at most once per
 * cooldown.
 */
export class AppleTokenVerifier {
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;

  constructor(private readonly o: AppleTokenVerifierOptions) {
    const remote = createRemoteJWKSet(new URL(o.keysUrl), {
      timeoutDuration: o.timeoutMs ?? 5000,
      cooldownDuration: o.cooldownMs ?? 30_000,
      cacheMaxAge: o.cacheMaxAgeMs ?? 600_000,
      ...(o.fetch ? { [customFetch]: o.fetch } : {}),
    });
    this.keys = remote;
  }

  /** The claims, or IdTokenRejectedError / KeysUnavailableError. */
  async verify(token: string, audience: string | string[]): Promise<AppleClaims> {
    const keys = async (header: Parameters<typeof this.keys>[0], jws: Parameters<typeof this.keys>[1]) => {
      try {
        return await this.keys(header, jws);
      } catch (err) {
        // No key for this kid (after a refetch), or a key jose cannot use: the token's fault.
        if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys || err instanceof errors.JOSENotSupported) throw err;
        // Timeout, network error, non-200, not JSON, not a JWKS: the key set's fault.
        throw new KeysUnavailableError(`Apple's keys at ${this.o.keysUrl} could not be read: ${(err as Error).message}`, { cause: err });
      }
    };
    try {
      const { payload } = await jwtVerify<AppleClaims>(token, keys, {
        algorithms: ['RS256'],
        issuer: this.o.issuer,
        audience,
        currentDate: this.o.clock.now(),
        requiredClaims: ['sub', 'exp'],
      });
      if (typeof payload.sub !== 'string' || payload.sub.length === 0) throw new IdTokenRejectedError('the token has no subject');
      return payload;
    } catch (err) {
      if (err instanceof KeysUnavailableError || err instanceof IdTokenRejectedError) throw err;
      const code = (err as { code?: string }).code ?? (err as Error).name;
      throw new IdTokenRejectedError(`identity token refused (${code}): ${(err as Error).message}`, { cause: err });
    }
  }
}
