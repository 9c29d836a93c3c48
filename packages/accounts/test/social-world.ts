import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import type { AccountsConfig, AccountsTuning } from '../src/index.js';
import { s256 } from '../src/social/SocialSignIn.js';
import { createWorld, type InstanceOptions, type World } from './helpers.js';
import { APPLE_APP_AUDIENCES, APPLE_ISSUER, APPLE_WEB, GOOGLE_CLIENT, TestIdp } from './idp.js';

/** Allow-listed app URIs: a custom scheme, and an https one that already has a query. */
export const APP_URI = 'com.example.meals:/oauth/callback';
export const APP_URI_WITH_QUERY = 'https://meals.example.test/app-callback?from=ios';

export type Tuning = AccountsTuning;

export interface SocialWorld extends World {
  idp: TestIdp;
  /** An app (another accounts instance, same database) with different configuration or tuning. */
  variant(config?: Partial<AccountsConfig>, tuning?: Tuning, options?: InstanceOptions): Express;
}

export function socialConfig(idp: TestIdp): Partial<AccountsConfig> {
  return {
    google: {
      clientId: GOOGLE_CLIENT.id,
      clientSecret: GOOGLE_CLIENT.secret,
      authorizationUrl: idp.url('/google/authorize'),
      tokenUrl: idp.url('/google/token'),
      userInfoUrl: idp.url('/google/userinfo'),
    },
    apple: {
      web: { clientId: APPLE_WEB.clientId, teamId: APPLE_WEB.teamId, keyId: APPLE_WEB.keyId, privateKey: idp.appleClientKeyPem },
      authorizationUrl: idp.url('/apple/authorize'),
      tokenUrl: idp.url('/apple/token'),
      keysUrl: idp.url('/apple/keys'),
      issuer: APPLE_ISSUER,
      nativeAudiences: APPLE_APP_AUDIENCES,
    },
    appRedirectUris: [APP_URI, APP_URI_WITH_QUERY],
  };
}

/** Fast hashing, no JWKS cooldown (each test starts with a fresh key set anyway). */
export const TEST_TUNING: Tuning = { bcryptCost: 4, hashWorkers: 1, jwksCooldownMs: 0, providerTimeoutMs: 5000, jwksTimeoutMs: 2000 };

/** The accounts world of helpers.ts, configured for Google and Apple at a loopback identity provider. */
export async function createSocialWorld(): Promise<SocialWorld> {
  const idp = new TestIdp();
  await idp.start();
  const world = await createWorld({ config: socialConfig(idp), options: { tuning: TEST_TUNING } });
  idp.clock = world.clock;
  const close = world.close.bind(world);
  const reset = world.reset.bind(world);
  return Object.assign(world, {
    idp,
    variant(config: Partial<AccountsConfig> = {}, tuning: Tuning = TEST_TUNING, options: InstanceOptions = {}) {
      return world.another(config, { tuning, ...options }).app;
    },
    async reset() {
      await reset();
      idp.reset();
    },
    async close() {
      await close();
      await idp.stop();
    },
  });
}

/** A PKCE verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = Buffer.from(Array.from({ length: 32 }, () => Math.floor(Math.random() * 256))).toString('base64url');
  return { verifier, challenge: s256(verifier) };
}

/** Path and query of an absolute URL on the service (the IdP sends the browser to PUBLIC_BASE_URL). */
function onService(href: string): string {
  const u = new URL(href);
  return `${u.pathname}${u.search}`;
}

/** The browser at Google: challenge (302) → the IdP's authorize (302 back) → our callback. Answers the callback's response. */
export async function throughGoogle(agent: request.Agent, query = ''): Promise<request.Response> {
  const start = await agent.get(`/api/v1/auth/challenge/google${query}`);
  expect(start.status, JSON.stringify(start.body)).to.equal(302);
  const atIdp = await fetch(start.headers.location!, { redirect: 'manual' });
  expect(atIdp.status).to.equal(302);
  return agent.get(onService(atIdp.headers.get('location')!));
}

/** The browser at Apple: challenge (302) → the IdP's authorize (the form it would post) → our callback, as a form POST. */
export async function throughApple(agent: request.Agent, query = '', tamper?: (fields: Record<string, string>) => void): Promise<request.Response> {
  const start = await agent.get(`/api/v1/auth/challenge/apple${query}`);
  expect(start.status, JSON.stringify(start.body)).to.equal(302);
  const atIdp = await fetch(start.headers.location!);
  expect(atIdp.status).to.equal(200);
  const { action, fields } = (await atIdp.json()) as { action: string; fields: Record<string, string> };
  tamper?.(fields);
  return agent.post(onService(action)).type('form').send(fields);
}

/** From a provider callback's 302 on to external-callback; answers external-callback's response. */
export async function toExternalCallback(agent: request.Agent, callback: request.Response): Promise<request.Response> {
  expect(callback.status).to.equal(302);
  expect(callback.headers.location).to.match(/^\/api\/v1\/auth\/external-callback(\?|$)/);
  return agent.get(callback.headers.location!);
}

/** The whole browser round trip through `provider`; answers external-callback's response. */
export async function signInWith(provider: 'google' | 'apple', agent: request.Agent, query = ''): Promise<request.Response> {
  const callback = provider === 'google' ? await throughGoogle(agent, query) : await throughApple(agent, query);
  return toExternalCallback(agent, callback);
}

/** The app flow up to the code on the app's URI; answers the code (or fails the test). */
export async function appCode(w: SocialWorld, provider: 'google' | 'apple', challenge: string, redirectUri = APP_URI): Promise<string> {
  const browser = request.agent(w.app);
  const query = `?redirectUri=${encodeURIComponent(redirectUri)}&codeChallenge=${challenge}`;
  const done = await signInWith(provider, browser, query);
  expect(done.status).to.equal(302);
  const location = done.headers.location!;
  expect(location.startsWith(redirectUri)).to.equal(true);
  const code = new URL(location).searchParams.get('code');
  expect(code, location).to.be.a('string');
  return code!;
}

/** Set-Cookie of a response, as a list. */
export function setCookies(res: request.Response): string[] {
  return (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
}

export function cookieNamed(res: request.Response, name: string): string | undefined {
  return setCookies(res).find((c) => c.startsWith(`${name}=`));
}
