import { toSingleLine } from '@svc/http-kit';
import type { ProviderName } from './config.js';

/** Who the provider says signed in; what the external cookie carries to external-callback. */
export interface ExternalIdentity {
  provider: ProviderName;
  /** The provider's stable user id (`sub`). */
  subject: string;
  email: string | null;
  /** The provider vouches that `email` belongs to this user. */
  emailVerified: boolean;
  /** For a new account only; already composed from the names the provider (or the app) gave. */
  displayName: string;
}

const DISPLAY_NAME_MAX = 80;

/**
 * The display name of a new account: given and family name, else the provider's full name, else
 * the local part of the address, else `fallback` ('Google user', 'Apple user'); at most 80 characters.
 */
export function composeDisplayName(parts: { givenName?: unknown; familyName?: unknown; fullName?: unknown; email?: unknown }, fallback: string): string {
  // A provider's name is text we did not validate: no control character, separator or bidi control comes through.
  const text = (v: unknown) => (typeof v === 'string' ? toSingleLine(v).replace(/\s+/g, ' ').trim() : '');
  const named = [text(parts.givenName), text(parts.familyName)].filter(Boolean).join(' ') || text(parts.fullName);
  const local = text(parts.email).split('@')[0] ?? '';
  const name = named || local || fallback;
  return [...name].slice(0, DISPLAY_NAME_MAX).join('');
}

/** Apple and Google send `email_verified` as a boolean or as the string "true". */
export function vouched(value: unknown): boolean {
  return value === true || value === 'true';
}
