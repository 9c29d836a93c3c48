/**
 * A client generated from the served OpenAPI document (openapi-typescript → `schema.d.ts`,
 * written by test/client.test.ts into test-artifacts/client/) and openapi-fetch, driving a new
 * person's journey against a live server. The test first compiles this file against the generated
 * types (so a schema the client cannot use fails here), then runs it.
 *
 * Kept out of the package's own typecheck (tsconfig.json excludes test/client): the types exist
 * only once the test has generated them.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '../../test-artifacts/client/schema.js';

export interface JourneyHooks {
  /** The userId and token of the confirmation link mailed to `email` (from the test SMTP receiver). */
  confirmationLink(email: string): Promise<{ userId: string; token: string }>;
}

export interface JourneyResult {
  emailConfirmed: boolean;
  householdName: string;
  ruleKind: components['schemas']['MealRuleResponse']['kind'];
  events: { date: string; eventType: string }[];
  total: number | null;
  refusedCode: string;
  unauthenticatedCode: string;
  /** What a personal access token (events:read) read, and the code it got for a rule write (outside its scope). */
  tokenEvents: number;
  tokenRefusedCode: string;
  tokenRevokedCode: string;
  /** Each event's first answer and its retry named the same event. */
  retriesAnsweredTheSameEvent: boolean;
  /** The kinds of resource the changes feed reported, in order of their latest change. */
  changedResources: string[];
}

/** The session cookie, carried by hand: fetch in Node keeps no cookie jar. */
function cookieJar(): Middleware {
  let cookie: string | undefined;
  return {
    onRequest({ request }) {
      if (cookie) request.headers.set('Cookie', cookie);
      return request;
    },
    onResponse({ response }) {
      const set = response.headers.getSetCookie().find((c) => c.startsWith('service_session='));
      if (set) cookie = set.split(';')[0];
      return response;
    },
  };
}

export async function journey(baseUrl: string, hooks: JourneyHooks): Promise<JourneyResult> {
  const api = createClient<paths>({ baseUrl });
  api.use(cookieJar());
  const email = `journey-${Date.now()}@example.test`;

  const registered = await api.POST('/api/v1/auth/register', { body: { email, password: 'a long journey passphrase', displayName: 'Journey Person' } });
  if (registered.error) throw new Error(`register: ${registered.error.code}`);

  const link = await hooks.confirmationLink(email);
  const confirmed = await api.POST('/api/v1/auth/confirm-email', { body: link });
  if (confirmed.error) throw new Error(`confirm: ${confirmed.error.code}`);

  const me = await api.GET('/api/v1/me');
  if (!me.data) throw new Error(`me: ${me.error.code}`);
  const user: components['schemas']['MeResponse'] = me.data;

  const created = await api.POST('/api/v1/households', { body: { name: 'The Journey Household', timeZoneId: 'Europe/Oslo', defaultDinnerTime: '17:30' } });
  if (!created.data) throw new Error(`household: ${created.error.code}`);
  const householdId = created.data.id;
  const params = { path: { householdId } };

  const rule = await api.POST('/api/v1/households/{householdId}/rules', {
    params,
    body: {
      payload: { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 2, maximumPerWeek: 2 },
      strength: 'Hard',
      scope: 'Permanent',
      startDate: null,
      endDate: null,
    },
  });
  if (!rule.data) throw new Error(`rule: ${rule.error.code}`);

  const eventIds: string[] = [];
  for (const date of ['2026-12-24', '2026-12-31']) {
    const body = {
      date,
      eventType: 'Guests' as const,
      servingTime: '18:00',
      availableCookingMinutes: 90,
      notes: 'Family dinner',
      participants: [{ memberId: null, name: 'Grandma' }],
    };
    // Sent with an Idempotency-Key, then retried as a phone that lost the answer would: the retry answers the same event.
    const keyed = { ...params, header: { 'Idempotency-Key': `journey-${date}` } };
    const event = await api.POST('/api/v1/households/{householdId}/events', { params: keyed, body });
    if (!event.data) throw new Error(`event: ${event.error.code}`);
    const retried = await api.POST('/api/v1/households/{householdId}/events', { params: keyed, body });
    if (!retried.data) throw new Error(`retried event: ${retried.error.code}`);
    eventIds.push(event.data.id, retried.data.id);
  }
  // What changed, as an app that syncs reads it.
  const changes = await api.GET('/api/v1/households/{householdId}/changes', { params: { ...params, query: { limit: 500 } } });
  if (!changes.data) throw new Error(`changes: ${changes.error.code}`);
  const page = await api.GET('/api/v1/households/{householdId}/events', { params: { ...params, query: { from: '2026-12-01', to: '2026-12-31', limit: 10 } } });
  if (!page.data) throw new Error(`events: ${page.error.code}`);

  // A refusal arrives typed: `code` is one of the codes the document lists for this answer.
  const refused = await api.POST('/api/v1/households/{householdId}/rules', {
    params,
    body: {
      payload: { kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: 3, maximumPerWeek: 1 },
      strength: 'Hard',
      scope: 'Permanent',
      startDate: null,
      endDate: null,
    },
  });
  const refusedCode: string = refused.error?.code ?? 'none';

  // A personal access token, made with the session and used by a client of its own (no cookie):
  // it reads events (its scope), is refused a rule write (not its scope), and stops once deleted.
  const made = await api.POST('/api/v1/me/tokens', { body: { name: 'Journey script', scopes: ['events:read'] } });
  if (!made.data) throw new Error(`token: ${made.error.code}`);
  const token: components['schemas']['CreatedAccessTokenResponse'] = made.data;
  const script = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token.token}` } });
  const seen = await script.GET('/api/v1/households/{householdId}/events', {
    params: { ...params, query: { from: '2026-12-01', to: '2026-12-31', limit: 10 } },
  });
  if (!seen.data) throw new Error(`events with a token: ${seen.error.code}`);
  const outOfScope = await script.POST('/api/v1/households/{householdId}/rules', { params, body: ruleBody(rule.data) });
  const deleted = await api.DELETE('/api/v1/me/tokens/{tokenId}', { params: { path: { tokenId: token.id } } });
  if (deleted.error) throw new Error(`delete token: ${deleted.error.code}`);
  const revoked = await script.GET('/api/v1/households/{householdId}/events', {
    params: { ...params, query: { from: '2026-12-01', to: '2026-12-31', limit: 10 } },
  });

  await api.POST('/api/v1/auth/logout');
  const after = await api.GET('/api/v1/me');
  const total: number | null = page.data.total;
  return {
    emailConfirmed: user.emailConfirmed ?? false,
    householdName: created.data.name,
    ruleKind: rule.data.kind,
    events: page.data.items.map((e) => ({ date: e.date, eventType: e.eventType })),
    total,
    refusedCode,
    unauthenticatedCode: after.error?.code ?? 'none',
    tokenEvents: seen.data.items.length,
    tokenRefusedCode: outOfScope.error?.code ?? 'none',
    tokenRevokedCode: revoked.error?.code ?? 'none',
    retriesAnsweredTheSameEvent: eventIds[0] === eventIds[1] && eventIds[2] === eventIds[3] && eventIds[0] !== eventIds[2],
    changedResources: changes.data.items.map((i) => i.resource),
  };
}

/** The body that made `rule`, to send again. */
function ruleBody(rule: components['schemas']['MealRuleResponse']) {
  return { payload: rule.payload, strength: rule.strength, scope: rule.scope, startDate: rule.startDate, endDate: rule.endDate };
}
