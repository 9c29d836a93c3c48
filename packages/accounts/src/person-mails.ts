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
    [`Signing in with ${name} no longer opens your account, and every session signed in with ${name} was ended. Your other ways to sign in are unchanged.`],
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

const FACTOR_NOTICES = {
  en: {
    totp_enabled: {
      subject: 'Two-step sign-in was turned on',
      body: 'Signing in to your account now also asks for a code from your authenticator app. Keep your recovery codes somewhere safe.',
    },
    totp_disabled: {
      subject: 'Two-step sign-in was turned off',
      body: 'Signing in to your account no longer asks for a code from an authenticator app, and your recovery codes no longer work.',
    },
    recovery_code_used: {
      subject: 'A recovery code was used',
      body: 'One of your recovery codes was used to sign in or confirm it was you. It will not work again.',
    },
    passkey_added: { subject: 'A passkey was added to your account', body: 'A new passkey can now sign in to your account.' },
    passkey_removed: { subject: 'A passkey was removed from your account', body: 'One of your passkeys can no longer sign in to your account.' },
    totp_codes_blocked: {
      subject: 'Too many wrong sign-in codes',
      body: 'Someone entered 100 wrong codes from your authenticator app in a row, so codes no longer work. Sign in with a recovery code, or reset your password; if this was not you, also change your password.',
    },
  },
  nb: {
    totp_enabled: {
      subject: 'Totrinnsinnlogging ble slått på',
      body: 'Innlogging på kontoen din ber nå også om en kode fra autentiseringsappen din. Ta vare på gjenopprettingskodene dine på et trygt sted.',
    },
    totp_disabled: {
      subject: 'Totrinnsinnlogging ble slått av',
      body: 'Innlogging på kontoen din ber ikke lenger om en kode fra en autentiseringsapp, og gjenopprettingskodene dine virker ikke lenger.',
    },
    recovery_code_used: {
      subject: 'En gjenopprettingskode ble brukt',
      body: 'En av gjenopprettingskodene dine ble brukt til å logge inn eller bekrefte at det var deg. Den virker ikke igjen.',
    },
    passkey_added: { subject: 'En tilgangsnøkkel ble lagt til kontoen din', body: 'En ny tilgangsnøkkel (passkey) kan nå logge inn på kontoen din.' },
    passkey_removed: { subject: 'En tilgangsnøkkel ble fjernet fra kontoen din', body: 'En av tilgangsnøklene dine kan ikke lenger logge inn på kontoen din.' },
    totp_codes_blocked: {
      subject: 'For mange feil innloggingskoder',
      body: 'Noen skrev inn 100 feil koder fra autentiseringsappen din på rad, så kodene virker ikke lenger. Logg inn med en gjenopprettingskode, eller tilbakestill passordet; var det ikke deg, bytt også passord.',
    },
  },
} as const;

/** The notice of a change of a person's second factors or passkeys (no secret in it), in English or Norwegian Bokmål. */
export function signInFactorNoticeMail(
  base: string,
  m: { to: string; displayName: string; notice: keyof (typeof FACTOR_NOTICES)['en']; language?: 'en' | 'nb' },
): MailContent {
  const nb = m.language === 'nb';
  const text = FACTOR_NOTICES[nb ? 'nb' : 'en'][m.notice];
  return compose(
    `factor_${m.notice}` as MailContent['kind'],
    m.to,
    text.subject,
    nb ? `Hei ${m.displayName},` : hello(m.displayName),
    [text.body],
    { url: links.login(base), label: nb ? 'Logg inn' : 'Sign in' },
    [
      nb
        ? 'Var det ikke deg? Logg inn, bytt passord og avslutt øktene du ikke kjenner igjen.'
        : 'If this was not you, sign in, change your password and end the sessions you do not recognise.',
    ],
  );
}
