/** Google sign-in (decisions.md §1: GOOGLE_*). Every endpoint is overridable for staging and tests. */
export interface GoogleConfig {
  clientId: string;
  clientSecret: string;
  authorizationUrl: string;
  tokenUrl: string;
  /** The OpenID Connect userinfo endpoint (its path ends in `/userinfo`). */
  userInfoUrl: string;
}

/** Sign in with Apple (decisions.md §1: APPLE_*). */
export interface AppleConfig {
  /** Browser sign-in; undefined: Apple is not offered on the web (native sign-in may still be). */
  web?: { clientId: string; teamId: string; keyId: string; privateKey: string };
  authorizationUrl: string;
  tokenUrl: string;
  /** JWKS of Apple's identity-token keys. */
  keysUrl: string;
  /** Expected `iss` of identity tokens. */
  issuer: string;
  /** App bundle ids accepted as `aud` by native sign-in; empty: native sign-in answers 404. */
  nativeAudiences: string[];
}

export type ProviderName = 'google' | 'apple';

/** How GET /auth/providers names each provider. */
export const PROVIDER_LABELS: Record<ProviderName, { scheme: 'Google' | 'Apple'; displayName: string }> = {
  google: { scheme: 'Google', displayName: 'Google' },
  apple: { scheme: 'Apple', displayName: 'Apple' },
};

/** The callback URL registered with each provider (decisions.md §4). */
export function callbackPath(provider: ProviderName): string {
  return `/api/v1/auth/callback/${provider}`;
}

export const EXTERNAL_CALLBACK_PATH = '/api/v1/auth/external-callback';
