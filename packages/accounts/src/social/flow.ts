import { InputError } from '@svc/http-kit';

/**
 * Where a social sign-in ends. Browser: a session cookie and a redirect to a page of this site.
 * App: a single-use code on the app's own URI, redeemed at POST /auth/exchange with the PKCE verifier.
 */
export type Flow = { kind: 'browser'; returnUrl?: string } | { kind: 'app'; redirectUri: string; codeChallenge: string };

/** The longest returnUrl / redirectUri accepted (longer: 400 value_too_long from the schema). */
export const MAX_URL_LENGTH = 2048;

// Tabs and newlines are removed by browsers before parsing ("/\t/evil" becomes "//evil").
function hasControlCharacter(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

function plainlySiteRelative(path: string): boolean {
  return path.startsWith('/') && !path.startsWith('//') && !path.includes('\\') && !hasControlCharacter(path);
}

/** Decodes %XX escapes of ASCII characters only: all that can turn a path into `//host` or `/\host`. */
function decodeAsciiEscapes(s: string): string {
  return s.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * A returnUrl this site may redirect to: a path on this site (`/…`), never `//host`, a scheme,
 * a backslash or a control character, in the raw form or in any percent-decoded form (a later
 * hop, or the web app, may decode it once more). Anything else answers undefined.
 */
export function safeReturnUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URL_LENGTH) return undefined;
  let form = value;
  for (let round = 0; ; round++) {
    if (!plainlySiteRelative(form)) return undefined;
    const decoded = decodeAsciiEscapes(form);
    if (decoded === form) break;
    // Still encoded after several rounds: not a path anybody means.
    if (round === 4) return undefined;
    form = decoded;
  }
  const base = new URL('https://site.invalid/');
  return new URL(value, base).origin === base.origin ? value : undefined;
}

/** S256 challenge: BASE64URL(SHA-256(verifier)), 32 bytes, so exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export interface ChallengeQuery {
  returnUrl?: string;
  redirectUri?: string;
  codeChallenge?: string;
}

function invalid(field: string, message: string, detail: string): InputError {
  return new InputError('validation_failed', detail, [{ field, message, in: 'query' }]);
}

/**
 * The flow a challenge asks for (service-spec Account rule 11, decisions.md §4):
 * - `codeChallenge` without `redirectUri` or the other way round: 400 `app_signin_incomplete`;
 * - a `codeChallenge` that is not S256 (43 base64url characters): 400 `validation_failed`;
 * - a `redirectUri` that is not exactly an entry of APP_REDIRECT_URIS: 400 `validation_failed`;
 * - a `returnUrl` that is not site-relative: 400 `validation_failed` (checked in both flows; the
 *   app flow does not use it).
 */
export function flowOf(query: ChallengeQuery, allowedRedirectUris: readonly string[]): Flow {
  const { returnUrl, redirectUri, codeChallenge } = query;
  if (returnUrl !== undefined && safeReturnUrl(returnUrl) === undefined) {
    throw invalid('returnUrl', 'must be a path on this site (/…), without a scheme, // or a backslash', 'returnUrl must be site-relative');
  }
  const hasUri = redirectUri !== undefined && redirectUri !== '';
  const hasChallenge = codeChallenge !== undefined && codeChallenge !== '';
  if (hasUri !== hasChallenge) {
    const missing = hasUri ? 'codeChallenge' : 'redirectUri';
    throw new InputError('app_signin_incomplete', `The app flow needs both codeChallenge and redirectUri; ${missing} is missing`, [
      { field: missing, message: 'is required with the other app-flow parameter', in: 'query' },
    ]);
  }
  if (!hasUri) return returnUrl === undefined ? { kind: 'browser' } : { kind: 'browser', returnUrl };
  if (!S256_CHALLENGE.test(codeChallenge!))
    throw invalid('codeChallenge', 'must be an S256 challenge: 43 base64url characters', 'codeChallenge must be S256 (43 base64url characters)');
  if (!allowedRedirectUris.includes(redirectUri!))
    throw invalid('redirectUri', 'is not an allowed app redirect URI', 'redirectUri is not one of APP_REDIRECT_URIS');
  return { kind: 'app', redirectUri: redirectUri!, codeChallenge: codeChallenge! };
}

/** `uri` with one more query parameter, placed before any fragment. */
export function withQueryParam(uri: string, name: string, value: string): string {
  const hash = uri.indexOf('#');
  const base = hash === -1 ? uri : uri.slice(0, hash);
  const fragment = hash === -1 ? '' : uri.slice(hash);
  const sep = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  return `${base}${sep}${encodeURIComponent(name)}=${encodeURIComponent(value)}${fragment}`;
}
