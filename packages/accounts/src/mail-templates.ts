/** The mails of the spec's Events table. Links are built on PUBLIC_BASE_URL only, never on a request's Host. */

import { toSingleLine } from '@svc/http-kit';
import escapeHtmlText from 'escape-html';

export type MailKind =
  | 'confirm_email'
  | 'account_exists'
  | 'change_email'
  | 'change_email_notice'
  | 'reset_password'
  // A person's own operations (person-mails.ts).
  | 'login_unlinked'
  | 'account_deleted'
  | 'data_exported'
  // A personal access token was made (access-token-mails.ts).
  | 'access_token_created'
  // Security notices (ASVS V6.3.7).
  | 'password_reset_notice'
  | 'password_changed_notice'
  | 'email_changed_notice'
  | 'identity_linked_notice'
  // Second factors and passkeys (@svc/sign-in-factors asks for them).
  | 'factor_totp_enabled'
  | 'factor_totp_disabled'
  | 'factor_totp_codes_blocked'
  | 'factor_recovery_code_used'
  | 'factor_passkey_added'
  | 'factor_passkey_removed';

export interface MailContent {
  kind: MailKind;
  to: string;
  subject: string;
  text: string;
  html: string;
}

const enc = encodeURIComponent;

/** HTML escaping of text in the mails' HTML part (`escape-html`). */
const escapeHtml = escapeHtmlText;

function trimBase(base: string): string {
  return base.replace(/\/+$/, '');
}

/** decisions.md §3 link shapes. */
export const links = {
  confirmEmail: (base: string, userId: string, token: string) => `${trimBase(base)}/confirm-email?userId=${enc(userId)}&token=${enc(token)}`,
  confirmEmailChange: (base: string, userId: string, newEmail: string, token: string) =>
    `${trimBase(base)}/confirm-email-change?userId=${enc(userId)}&newEmail=${enc(newEmail)}&token=${enc(token)}`,
  resetPassword: (base: string, email: string, token: string) => `${trimBase(base)}/reset-password?email=${enc(email)}&token=${enc(token)}`,
  login: (base: string) => `${trimBase(base)}/login`,
};

/** Text and HTML with the same paragraphs; the one link also stands alone on its line in the text. */
export function compose(
  kind: MailKind,
  to: string,
  subject: string,
  greeting: string,
  paragraphs: string[],
  link: { url: string; label: string } | undefined,
  after: string[] = [],
): MailContent {
  // Names and addresses are interpolated into these lines; whatever they hold (a row stored before
  // names were validated, a provider's name), no line of a mail can be broken or reordered by it.
  const lines = { subject: toSingleLine(subject), greeting: toSingleLine(greeting), paragraphs: paragraphs.map(toSingleLine), after: after.map(toSingleLine) };
  const text = [
    lines.greeting,
    '',
    ...lines.paragraphs.flatMap((p) => [p, '']),
    ...(link ? [link.url, ''] : []),
    ...lines.after.flatMap((p) => [p, '']),
    '— Meal Planner',
  ].join('\n');
  const p = (s: string) => `<p>${escapeHtml(s)}</p>`;
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    p(lines.greeting),
    ...lines.paragraphs.map(p),
    ...(link ? [`<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p>`, `<p style="font-size:small">${escapeHtml(link.url)}</p>`] : []),
    ...lines.after.map(p),
    p('— Meal Planner'),
    '</body></html>',
  ].join('\n');
  return { kind, to, subject: lines.subject, text, html };
}

export function hello(displayName: string): string {
  return `Hello ${displayName},`;
}

export function confirmEmailMail(base: string, m: { to: string; displayName: string; userId: string; token: string }): MailContent {
  return compose(
    'confirm_email',
    m.to,
    'Confirm your e-mail address',
    hello(m.displayName),
    ['Please confirm that this is your e-mail address by opening the link below. It works once, for 48 hours.'],
    { url: links.confirmEmail(base, m.userId, m.token), label: 'Confirm my address' },
    ['If you did not sign up, you can ignore this mail.'],
  );
}

export function accountExistsMail(base: string, m: { to: string; displayName: string }): MailContent {
  return compose(
    'account_exists',
    m.to,
    'You already have an account',
    hello(m.displayName),
    [
      'Someone (perhaps you) tried to sign up with this address, but it already has an account. Sign in instead; if you forgot the password, choose "Forgot password" on the sign-in page.',
    ],
    { url: links.login(base), label: 'Sign in' },
    ['If it was not you, nothing has changed and you can ignore this mail.'],
  );
}

export function changeEmailMail(base: string, m: { to: string; displayName: string; userId: string; token: string }): MailContent {
  return compose(
    'change_email',
    m.to,
    'Confirm your new e-mail address',
    hello(m.displayName),
    ['You asked to sign in with this address from now on. Open the link below to confirm it; until then nothing changes. It works once, for 48 hours.'],
    { url: links.confirmEmailChange(base, m.userId, m.to, m.token), label: 'Use this address' },
    ['If you did not ask for this, ignore this mail.'],
  );
}

export function changeEmailNoticeMail(base: string, m: { to: string; displayName: string; newEmail: string; token: string }): MailContent {
  return compose(
    'change_email_notice',
    m.to,
    'Your sign-in address is about to change',
    hello(m.displayName),
    [
      `Someone signed in to your account asked to move its sign-in address to ${m.newEmail}. Nothing changes until that address confirms.`,
      'If this was not you, reset your password now with the link below (it works once, for one hour); that also signs everyone else out.',
    ],
    { url: links.resetPassword(base, m.to, m.token), label: 'Reset my password' },
  );
}

export function resetPasswordMail(base: string, m: { to: string; displayName: string; token: string }): MailContent {
  return compose(
    'reset_password',
    m.to,
    'Reset your password',
    hello(m.displayName),
    ['Open the link below to choose a new password. It works once, for one hour.'],
    { url: links.resetPassword(base, m.to, m.token), label: 'Choose a new password' },
    ['If you did not ask for this, ignore this mail; your password stays as it is.'],
  );
}

/*
 * Security notices: they tell the holder that something happened, carry no token and no secret
 * (only a link to the sign-in page), and go out through the outbox in the transaction of the change.
 */

const NOT_YOU_SIGNED_IN =
  'If this was not you, choose "Forgot password" on the sign-in page now: a new password signs everyone else out and cancels every open link.';

export function passwordResetNoticeMail(base: string, m: { to: string; displayName: string }): MailContent {
  return compose(
    'password_reset_notice',
    m.to,
    'Your password was reset',
    hello(m.displayName),
    ['The password of your Meal Planner account was just reset with a link mailed to this address. Every other session has been signed out.'],
    { url: links.login(base), label: 'Sign in' },
    [NOT_YOU_SIGNED_IN],
  );
}

export function passwordChangedNoticeMail(base: string, m: { to: string; displayName: string }): MailContent {
  return compose(
    'password_changed_notice',
    m.to,
    'Your password was changed',
    hello(m.displayName),
    ['The password of your Meal Planner account was just changed (or set) by someone signed in to it. Every other session has been signed out.'],
    { url: links.login(base), label: 'Sign in' },
    [NOT_YOU_SIGNED_IN],
  );
}

export function emailChangedNoticeMail(m: { to: string; displayName: string; newEmail: string }): MailContent {
  return compose(
    'email_changed_notice',
    m.to,
    'Your sign-in address was changed',
    hello(m.displayName),
    [
      `Your Meal Planner account now signs in with ${m.newEmail} instead of this address. Every other session has been signed out, and mail about the account now goes to the new address.`,
      'If this was not you, someone else controls your account: contact the Meal Planner team right away, and do not follow links in mails that ask for your password.',
    ],
    undefined,
  );
}

export function identityLinkedNoticeMail(base: string, m: { to: string; displayName: string; provider: string }): MailContent {
  return compose(
    'identity_linked_notice',
    m.to,
    `${m.provider} sign-in was added to your account`,
    hello(m.displayName),
    [`Your Meal Planner account can now be signed in with ${m.provider}, whose account vouches for this address.`],
    { url: links.login(base), label: 'Sign in' },
    [NOT_YOU_SIGNED_IN],
  );
}
