import { compose, hello, links, type MailContent } from './mail-templates.js';

/**
 * The notices of a person's own operations. None carries a secret: each tells the account holder
 * what happened, so that someone else acting with a stolen session is noticed.
 */

const PROVIDER_NAMES = { google: 'Google', apple: 'Apple' } as const;

export function loginUnlinkedMail(base: string, m: { to: string; displayName: string; provider: 'google' | 'apple' }): MailContent {
  const name = PROVIDER_NAMES[m.provider];
  return compose(
    'login_unlinked',
    m.to,
    `${name} sign-in was removed from your account`,
    hello(m.displayName),
    [`Signing in with ${name} no longer opens your account. Your other ways to sign in are unchanged.`],
    { url: links.login(base), label: 'Sign in' },
    ['If this was not you, sign in, change your password and end the sessions you do not recognise.'],
  );
}

export function accountDeletedMail(base: string, m: { to: string; displayName: string }): MailContent {
  return compose(
    'account_deleted',
    m.to,
    'Your account was deleted',
    hello(m.displayName),
    [
      'Your account and everything stored about you were deleted: your sign-in methods, sessions, phones, memberships, and the households where you were the only member.',
      'In households you shared or had left, your name was taken off their meals and their calendar: you are shown there as "Former member", a place at the table without a name.',
      'You can sign up again with this address at any time; nothing from before comes back.',
    ],
    { url: links.login(base), label: 'Meal Planner' },
  );
}

export function dataExportedMail(base: string, m: { to: string; displayName: string; at: Date }): MailContent {
  return compose(
    'data_exported',
    m.to,
    'A copy of your data was downloaded',
    hello(m.displayName),
    [`A copy of everything stored about you was downloaded from your account at ${m.at.toISOString()} (UTC).`],
    { url: links.login(base), label: 'Sign in' },
    ['If this was not you, sign in, change your password and end the sessions you do not recognise.'],
  );
}
