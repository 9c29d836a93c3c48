import Negotiator from 'negotiator';
import { compose, hello, links, type MailContent } from './mail-templates.js';

/** The languages of the token notice: Norwegian Bokmål for a request that prefers it, else English. */
export type NoticeLanguage = 'en' | 'nb';

/**
 * The language a notice caused by this request is written in, from its `Accept-Language` (read by
 * `negotiator`, as Express reads it): `nb` (or `no`, `nn`: Norwegian readers read Bokmål) when it is
 * preferred over English, else `en`. Accounts keep no language of their own; the person asking is
 * the person mailed.
 */
export function noticeLanguage(acceptLanguage: string | undefined): NoticeLanguage {
  if (!acceptLanguage) return 'en';
  const best = new Negotiator({ headers: { 'accept-language': acceptLanguage } }).language(['en', 'nb', 'no', 'nn']);
  return best === 'nb' || best === 'no' || best === 'nn' ? 'nb' : 'en';
}

/** What each token scope lets a token do, as the rest of a sentence "It may …" in each language of the notice. */
const SCOPE_WORDS: Record<string, Record<NoticeLanguage, string>> = {
  'households:read': { en: 'see your households', nb: 'se husholdningene dine' },
  'events:read': { en: 'see meal events', nb: 'se måltidene' },
  'events:write': { en: 'add and change meal events', nb: 'legge inn og endre måltider' },
  'rules:read': { en: 'see meal rules', nb: 'se måltidsreglene' },
  'rules:write': { en: 'change meal rules', nb: 'endre måltidsreglene' },
};

/**
 * The notice of a new personal access token: its name, scopes and expiry, never the token. Someone
 * who made one with a stolen session is noticed, and the holder learns where to delete it.
 */
export function accessTokenCreatedMail(
  base: string,
  m: { to: string; displayName: string; name: string; scopes: readonly string[]; expiresAt: string | null; language: NoticeLanguage },
): MailContent {
  const scopes = m.scopes.join(', ');
  if (m.language === 'nb') {
    const may = new Intl.ListFormat('nb', { type: 'conjunction' }).format(m.scopes.map((s) => SCOPE_WORDS[s]?.nb ?? s));
    return compose(
      'access_token_created',
      m.to,
      'Et nytt tilgangstoken ble laget for kontoen din',
      `Hei ${m.displayName},`,
      [
        `Et personlig tilgangstoken med navnet «${m.name}» ble nettopp laget for Meal Planner-kontoen din. Det kan ${may} på dine vegne (tilganger: ${scopes}), ${m.expiresAt ? `til ${m.expiresAt} (UTC)` : 'uten utløpsdato'}.`,
        'Du finner tokenene dine i appen, under kontoen din, og kan slette dem der.',
      ],
      { url: links.login(base), label: 'Logg inn' },
      ['Var det ikke deg? Logg inn, slett tokenet og bytt passord: et nytt passord avslutter alle tokenene og alle andre økter.'],
    );
  }
  const may = new Intl.ListFormat('en', { type: 'conjunction' }).format(m.scopes.map((s) => SCOPE_WORDS[s]?.en ?? s));
  return compose(
    'access_token_created',
    m.to,
    'A new access token was made for your account',
    hello(m.displayName),
    [
      `A personal access token named "${m.name}" was just made for your Meal Planner account. It may ${may} on your behalf (scopes: ${scopes}), ${m.expiresAt ? `until ${m.expiresAt} (UTC)` : 'and does not expire'}.`,
      'Your tokens are listed in the app, under your account, where you can delete them.',
    ],
    { url: links.login(base), label: 'Sign in' },
    ['If this was not you, sign in, delete the token and change your password: a new password ends every token and every other session.'],
  );
}
