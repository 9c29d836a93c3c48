import { hkdfSync } from 'node:crypto';
import type { Clock } from '@svc/contracts';
import * as cookieModule from 'cookie';
import type { CookieOptions, Request, Response } from 'express';
import { jwtVerify, SignJWT } from 'jose';

/** The value of cookie `name` in the request's Cookie header (percent-decoded by `cookie`), if any. */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  return header ? cookieModule.parse(header)[name] : undefined;
}

export interface SignedCookieOptions {
  name: string;
  /** Sent back only to this path (the one route that reads it). */
  path: string;
  maxAgeSeconds: number;
  /** The service's session secret; each cookie signs with its own key derived from it. */
  secret: string;
  secure: boolean;
  sameSite: 'lax' | 'none';
  clock: Clock;
}

/**
 * A short-lived HttpOnly cookie holding a value the browser carries but cannot forge: a compact
 * JWT (HS256) whose key is derived from the session secret for this cookie alone (HKDF, so a
 * state cookie never passes as an external cookie) and whose `exp` is checked on the injected
 * clock. Not encrypted: it only ever holds what the browser's own user may see.
 */
export class SignedCookie<T extends object> {
  private readonly key: Uint8Array;

  constructor(private readonly o: SignedCookieOptions) {
    this.key = new Uint8Array(hkdfSync('sha256', o.secret, 'svc-accounts', `cookie:${o.name}`, 32));
  }

  private attributes(): CookieOptions {
    return { httpOnly: true, secure: this.o.secure, sameSite: this.o.sameSite, path: this.o.path };
  }

  /** Sets the cookie; `jti` gives it a unique id, for a reader that spends each cookie once. */
  async set(res: Response, value: T, options: { jti?: string } = {}): Promise<void> {
    const now = Math.floor(this.o.clock.now().getTime() / 1000);
    const jwt = new SignJWT({ v: value })
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience(this.o.name)
      .setIssuedAt(now)
      .setExpirationTime(now + this.o.maxAgeSeconds);
    if (options.jti !== undefined) jwt.setJti(options.jti);
    // Max-Age, which browsers obey over Expires (RFC 6265 5.3), is relative and needs no clock; the
    // Expires that Express adds beside it reads Date.now(). What ends the cookie here is the JWT's
    // `exp`, set and checked on the service clock.
    res.cookie(this.o.name, await jwt.sign(this.key), { ...this.attributes(), maxAge: this.o.maxAgeSeconds * 1000 });
  }

  /** The value, or undefined when the cookie is missing, forged, expired or another cookie's. */
  async read(req: Request): Promise<T | undefined> {
    return (await this.readSigned(req))?.value;
  }

  /** As `read`, with the cookie's id (`jti`, when it was set with one) and its expiry. */
  async readSigned(req: Request): Promise<{ value: T; jti?: string; expiresAt: Date } | undefined> {
    const raw = readCookie(req, this.o.name);
    if (!raw) return undefined;
    try {
      const { payload } = await jwtVerify(raw, this.key, {
        algorithms: ['HS256'],
        audience: this.o.name,
        currentDate: this.o.clock.now(),
        requiredClaims: ['exp'],
      });
      if (!payload.v || typeof payload.v !== 'object' || typeof payload.exp !== 'number') return undefined;
      const jti = typeof payload.jti === 'string' && payload.jti !== '' ? payload.jti : undefined;
      return { value: payload.v as T, jti, expiresAt: new Date(payload.exp * 1000) };
    } catch {
      return undefined;
    }
  }

  clear(res: Response): void {
    res.clearCookie(this.o.name, this.attributes());
  }
}
