import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '@svc/contracts';
import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair, type JWK, jwtVerify, SignJWT, UnsecuredJWT } from 'jose';

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

/** Who signs in at the identity provider next. */
export interface IdpUser {
  sub: string;
  email?: string;
  email_verified?: boolean | string;
  given_name?: string;
  family_name?: string;
  name?: string;
}

interface Grant {
  provider: 'google' | 'apple';
  clientId: string;
  redirectUri: string;
  codeChallenge?: string;
  nonce?: string;
  user: IdpUser;
}

export const GOOGLE_CLIENT = { id: 'google-client.apps.test', secret: 'google-client-secret' };
export const APPLE_WEB = { clientId: 'test.meals.web', teamId: 'TEAM123456', keyId: 'KEY1234567' };
export const APPLE_ISSUER = 'https://appleid.example.test';
export const APPLE_APP_AUDIENCES = ['test.meals.ios', 'test.meals.ios.beta'];
/** The `iss` of Google's id_tokens. */
export const GOOGLE_ISSUER = 'https://accounts.google.com';

/**
 * How Google's token endpoint answers: normally; 400 invalid_grant; 500 with a JSON error or an
 * HTML page; 200 with a body that is not JSON; the socket dropped; or no answer at all.
 */
export type GoogleTokenMode = 'ok' | 'refuse' | 'error-json' | 'error-html' | 'not-json' | 'drop' | 'hang';

/**
 * A real OAuth 2.0 / OpenID Connect identity provider on loopback, for Google and Apple alike:
 * authorization (Google: redirect with code; Apple: the form_post it would submit, as JSON),
 * token endpoints that check what real ones check (client secret or Apple's ES256 client-secret
 * JWT, redirect_uri, PKCE, single-use codes), Google's userinfo (Bearer header only), and Apple's
 * JWKS with RS256 keys that can be rotated. Tokens are real RS256 JWTs signed with jose, dated by
 * the test's clock.
 */
export class TestIdp {
  private server?: http.Server;
  private readonly grants = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, IdpUser>();
  private keys: { kid: string; pair: KeyPair; jwk: JWK }[] = [];
  /** Apple's client key: the service signs its client-secret JWT with the private half. */
  appleClientKey!: KeyPair;
  appleClientKeyPem!: string;
  clock!: Clock;
  baseUrl = '';
  /** The user who signs in at the next authorization. */
  user: IdpUser = { sub: 'user-1', email: 'ada@example.test', email_verified: true, given_name: 'Ada', family_name: 'Lovelace', name: 'Ada Lovelace' };
  /** Requests to the key set, and to each endpoint. */
  counts = { keys: 0, googleToken: 0, appleToken: 0, userinfo: 0 };
  /** What the key set answers: the keys, an error status, or nothing (the socket is dropped). */
  keysMode: 'ok' | 'error' | 'drop' = 'ok';
  /** Overrides of the id_token the Apple token endpoint issues. */
  appleIdTokenClaims: Record<string, unknown> = {};
  /** Why the last token request was refused. */
  lastRefusal = '';
  /** How Google's token endpoint answers. */
  googleTokenMode: GoogleTokenMode = 'ok';
  /**
   * When set, Google's token endpoint also issues an id_token, as the real one does for scope
   * `openid`: iss GOOGLE_ISSUER, aud the client, the user's sub, ten minutes from the clock's now,
   * then these claims over them (undefined removes one).
   */
  googleIdTokenClaims: Record<string, unknown> | undefined;
  /** Claims over the user's in Google's userinfo answer; `status` other than 200 answers that error. */
  userinfo: { status: number; claims: Record<string, unknown> } = { status: 200, claims: {} };
  /** What the Google token endpoint received last (form fields). */
  lastGoogleTokenForm: URLSearchParams | undefined;

  async start(): Promise<void> {
    await this.rotate();
    this.appleClientKey = await generateKeyPair('ES256', { extractable: true });
    this.appleClientKeyPem = await exportPKCS8(this.appleClientKey.privateKey);
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: Error) => {
        res.statusCode = 500;
        res.end(err.message);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  reset(): void {
    this.grants.clear();
    this.accessTokens.clear();
    this.counts = { keys: 0, googleToken: 0, appleToken: 0, userinfo: 0 };
    this.keysMode = 'ok';
    this.appleIdTokenClaims = {};
    this.googleTokenMode = 'ok';
    this.googleIdTokenClaims = undefined;
    this.userinfo = { status: 200, claims: {} };
    this.lastGoogleTokenForm = undefined;
    this.user = { sub: 'user-1', email: 'ada@example.test', email_verified: true, given_name: 'Ada', family_name: 'Lovelace', name: 'Ada Lovelace' };
  }

  /** A new signing key (new kid) becomes current; the old ones stay published. */
  async rotate(): Promise<string> {
    const pair = await generateKeyPair('RS256', { extractable: true });
    const kid = `k${this.keys.length + 1}-${randomBytes(3).toString('hex')}`;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid, alg: 'RS256', use: 'sig' };
    this.keys.push({ kid, pair, jwk });
    return kid;
  }

  get currentKid(): string {
    return this.keys.at(-1)!.kid;
  }

  /** PEM of the current public key (for the "HS256 keyed with the public key" attack). */
  async publicKeyPem(): Promise<string> {
    return exportSPKI(this.keys.at(-1)!.pair.publicKey);
  }

  url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  /**
   * An Apple identity token: RS256 with the current key unless told otherwise, iss APPLE_ISSUER,
   * aud the first app audience, an hour from the clock's now, claims of `user` plus `claims`.
   */
  async appleToken(
    claims: Record<string, unknown> = {},
    options: { key?: KeyPair; kid?: string; alg?: 'RS256' | 'none' | 'HS256'; hmacSecret?: string; lifetimeSeconds?: number } = {},
  ): Promise<string> {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const body = {
      iss: APPLE_ISSUER,
      aud: APPLE_APP_AUDIENCES[0],
      sub: this.user.sub,
      email: this.user.email,
      email_verified: this.user.email_verified,
      iat: now,
      exp: now + (options.lifetimeSeconds ?? 600),
      // Every authorization yields a token of its own (Apple's differ at least in their nonce or
      // times); two made here in the same second would otherwise be identical, i.e. a replay.
      jti: randomBytes(8).toString('hex'),
      ...claims,
    };
    for (const k of Object.keys(body) as (keyof typeof body)[]) if (body[k] === undefined) delete body[k];
    if (options.alg === 'none') return new UnsecuredJWT(body).encode();
    if (options.alg === 'HS256') {
      return new SignJWT(body)
        .setProtectedHeader({ alg: 'HS256', kid: options.kid ?? this.currentKid })
        .sign(new TextEncoder().encode(options.hmacSecret ?? 'secret'));
    }
    const signer = options.key ?? this.keys.at(-1)!.pair;
    return new SignJWT(body).setProtectedHeader({ alg: 'RS256', kid: options.kid ?? this.currentKid }).sign(signer.privateKey);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const refuse = (why: string) => {
      this.lastRefusal = why;
      json(400, { error: 'invalid_grant', error_description: why });
    };
    switch (`${req.method} ${url.pathname}`) {
      case 'GET /google/authorize': {
        const q = url.searchParams;
        if (
          q.get('client_id') !== GOOGLE_CLIENT.id ||
          q.get('response_type') !== 'code' ||
          q.get('code_challenge_method') !== 'S256' ||
          !q.get('code_challenge')
        )
          return json(400, { error: 'invalid_request' });
        if (!(q.get('scope') ?? '').split(' ').includes('email')) return json(400, { error: 'invalid_scope' });
        const code = this.grant({
          provider: 'google',
          clientId: GOOGLE_CLIENT.id,
          redirectUri: q.get('redirect_uri')!,
          codeChallenge: q.get('code_challenge')!,
          user: { ...this.user },
        });
        const back = new URL(q.get('redirect_uri')!);
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        res.writeHead(302, { location: back.href });
        return void res.end();
      }
      case 'POST /google/token': {
        this.counts.googleToken++;
        const form = await readForm(req);
        this.lastGoogleTokenForm = form;
        switch (this.googleTokenMode) {
          case 'refuse':
            return refuse('told to refuse');
          case 'error-json':
            return json(500, { error: 'server_error', error_description: 'backend unavailable' });
          case 'error-html':
            res.writeHead(500, { 'content-type': 'text/html' });
            return void res.end('<html><body>Internal Server Error</body></html>');
          case 'not-json':
            res.writeHead(200, { 'content-type': 'application/json' });
            return void res.end('{"access_token": ');
          case 'drop':
            return void req.socket.destroy();
          case 'hang':
            // No answer: the service must give up by its own deadline (stop() closes the socket).
            return;
        }
        const grant = this.grants.get(form.get('code') ?? '');
        this.grants.delete(form.get('code') ?? '');
        if (grant?.provider !== 'google') return refuse('unknown or used code');
        if (form.get('client_id') !== GOOGLE_CLIENT.id || form.get('client_secret') !== GOOGLE_CLIENT.secret) return refuse('client authentication failed');
        if (form.get('redirect_uri') !== grant.redirectUri) return refuse('redirect_uri mismatch');
        if (form.get('grant_type') !== 'authorization_code') return refuse('grant_type');
        const verifier = form.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== grant.codeChallenge) return refuse('PKCE verifier mismatch');
        const accessToken = randomBytes(16).toString('hex');
        this.accessTokens.set(accessToken, grant.user);
        const answer: Record<string, unknown> = { access_token: accessToken, token_type: 'Bearer', expires_in: 3599, scope: 'openid email profile' };
        if (this.googleIdTokenClaims) answer.id_token = await this.googleIdToken(grant.user, this.googleIdTokenClaims);
        return json(200, answer);
      }
      case 'GET /google/userinfo': {
        this.counts.userinfo++;
        // Only as a Bearer header: a token in the URL would end up in logs.
        if (url.searchParams.has('access_token')) return json(400, { error: 'invalid_request', error_description: 'token in the URL' });
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        const user = token ? this.accessTokens.get(token) : undefined;
        if (!user) return json(401, { error: 'invalid_token', error_description: 'unknown access token' });
        if (this.userinfo.status !== 200) return json(this.userinfo.status, { error: 'server_error' });
        return json(200, { ...user, ...this.userinfo.claims });
      }
      case 'GET /apple/authorize': {
        const q = url.searchParams;
        if (q.get('client_id') !== APPLE_WEB.clientId || q.get('response_mode') !== 'form_post' || q.get('response_type') !== 'code')
          return json(400, { error: 'invalid_request' });
        const code = this.grant({
          provider: 'apple',
          clientId: APPLE_WEB.clientId,
          redirectUri: q.get('redirect_uri')!,
          nonce: q.get('nonce') ?? undefined,
          user: { ...this.user },
        });
        const fields: Record<string, string> = { code, state: q.get('state') ?? '' };
        if (this.user.given_name || this.user.family_name)
          fields.user = JSON.stringify({ name: { firstName: this.user.given_name, lastName: this.user.family_name }, email: this.user.email });
        // Apple answers an HTML page that auto-submits this form to redirect_uri; here, as JSON.
        return json(200, { action: q.get('redirect_uri'), fields });
      }
      case 'POST /apple/token': {
        this.counts.appleToken++;
        const form = await readForm(req);
        const grant = this.grants.get(form.get('code') ?? '');
        this.grants.delete(form.get('code') ?? '');
        if (grant?.provider !== 'apple') return refuse('unknown or used code');
        if (form.get('client_id') !== APPLE_WEB.clientId || form.get('redirect_uri') !== grant.redirectUri) return refuse('client or redirect_uri mismatch');
        try {
          const { payload, protectedHeader } = await jwtVerify(form.get('client_secret') ?? '', this.appleClientKey.publicKey, {
            algorithms: ['ES256'],
            issuer: APPLE_WEB.teamId,
            subject: APPLE_WEB.clientId,
            audience: APPLE_ISSUER,
            currentDate: this.clock.now(),
          });
          if (protectedHeader.kid !== APPLE_WEB.keyId || typeof payload.exp !== 'number') return refuse('client secret kid or exp');
        } catch (err) {
          return refuse(`client secret: ${(err as Error).message}`);
        }
        const now = Math.floor(this.clock.now().getTime() / 1000);
        const { user } = grant;
        const claims = {
          iss: APPLE_ISSUER,
          aud: APPLE_WEB.clientId,
          sub: user.sub,
          email: user.email,
          email_verified: user.email_verified,
          nonce: grant.nonce,
          iat: now,
          exp: now + 600,
          ...this.appleIdTokenClaims,
        };
        const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: this.currentKid }).sign(this.keys.at(-1)!.pair.privateKey);
        return json(200, { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 3600, id_token: idToken });
      }
      case 'GET /apple/keys': {
        this.counts.keys++;
        if (this.keysMode === 'drop') return void req.socket.destroy();
        if (this.keysMode === 'error') return json(503, { error: 'unavailable' });
        return json(200, { keys: this.keys.map((k) => k.jwk) });
      }
      default:
        return json(404, { error: 'not_found' });
    }
  }

  /** A Google id_token for `user`, signed RS256 with the current key (nobody fetches Google's keys: it comes over TLS from the token endpoint). */
  private async googleIdToken(user: IdpUser, claims: Record<string, unknown>): Promise<string> {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    const body: Record<string, unknown> = {
      iss: GOOGLE_ISSUER,
      aud: GOOGLE_CLIENT.id,
      azp: GOOGLE_CLIENT.id,
      sub: user.sub,
      iat: now,
      exp: now + 600,
      ...claims,
    };
    for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
    return new SignJWT(body).setProtectedHeader({ alg: 'RS256', kid: this.currentKid }).sign(this.keys.at(-1)!.pair.privateKey);
  }

  private grant(grant: Grant): string {
    const code = randomBytes(16).toString('base64url');
    this.grants.set(code, grant);
    return code;
  }
}

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
