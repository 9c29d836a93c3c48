/**
 * Pages for the links the service mails (confirm an address, confirm a change of address, reset a
 * password, and `/login`, the sign-in link of every notice), served at exactly the paths the links
 * use, so that a person can finish what a mail asks without the web client. The host mounts them
 * unless WEB_PAGES=off (where a web client serves these paths itself). `/login` says how to sign
 * in (in the app) and offers a reset link; with WEB_CLIENT_URL it redirects to the web client.
 *
 * A page opened on another host name than PUBLIC_BASE_URL's (127.0.0.1 for localhost, an
 * instance's own address) redirects to the same path and query there first: its form posts to its
 * own origin, which must be PUBLIC_BASE_URL's to be accepted.
 *
 * How a page works, without JavaScript: GET shows what the link will do and one form; the form
 * posts (application/x-www-form-urlencoded, same origin) back to the same path, where the handler
 * calls the same AccountService operation as the JSON API (same rules, same transaction, same
 * auth rate limit), and the answer is a page that says what happened in words. Opening a link does
 * nothing by itself: mail scanners fetch links, and a GET must not spend a token.
 *
 * Tokens: they arrive in the query string and go back in a hidden field; the request log records
 * the route pattern only (never the URL), `Referrer-Policy: no-referrer` keeps them out of any
 * Referer, `Cache-Control: no-store` out of caches.
 */
import type { Logger } from '@svc/http-kit';
import { HttpError, isUuid, keepContext, newTraceId, toProblem } from '@svc/http-kit';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { PASSWORD_MAX, PASSWORD_MIN, PASSWORD_RULES, passwordLength } from '../passwords.js';
import type { AccountService } from '../service.js';
import { type Html, hidden, html, PAGE_CSP, page } from './html.js';

export interface PagesOptions {
  service: AccountService;
  /** The per-client-IP limit of /api/v1/auth/*: a form post counts like the API call it stands for. */
  authLimiter: RequestHandler;
  /** Form posts must come from this origin when the browser names one; pages are shown on its host only. */
  publicBaseUrl: string;
  /** WEB_CLIENT_URL: where a web client signs people in; `/login` redirects there. Undefined: `/login` is a page of its own. */
  webClientUrl?: string;
  logger: Logger;
}

/** The paths of the mailed links (decisions.md: the links in mails; `/login` in every notice). */
export const PAGE_PATHS = ['/confirm-email', '/confirm-email-change', '/reset-password', '/login', '/sign-in/verify'] as const;

const MAX_TOKEN = 200;
const MAX_EMAIL = 254;

type Fields = Record<string, string | undefined>;

/** One string per field (a repeated field counts as absent), trimmed of nothing: tokens are exact. */
function fields(source: unknown): Fields {
  const out: Fields = {};
  if (source && typeof source === 'object') {
    for (const [k, v] of Object.entries(source as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

const okUserId = (v: string | undefined): v is string => v !== undefined && isUuid(v);
const okToken = (v: string | undefined): v is string => v !== undefined && v.length > 0 && v.length <= MAX_TOKEN;
const okEmail = (v: string | undefined): v is string => v !== undefined && v.length > 0 && v.length <= MAX_EMAIL && v.includes('@');

function send(res: Response, status: number, title: string, body: Html): void {
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Robots-Tag', 'noindex');
  res.end(page(title, body));
}

function incomplete(res: Response): void {
  res.locals.problemCode = 'validation_failed';
  send(
    res,
    400,
    'This link is incomplete',
    html`<p class="bad" role="alert">Part of the link is missing or damaged. Mail programs sometimes break long links across lines.</p>
<p>Open the mail again and click the link, or copy the whole link into the address bar.</p>`,
  );
}

function minutes(seconds: number): string {
  const m = Math.max(1, Math.ceil(seconds / 60));
  return m === 1 ? 'a minute' : `${m} minutes`;
}

/** Runs a callback-style middleware (the rate limiter) as a promise. */
function run(mw: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    Promise.resolve(mw(req, res, (err?: unknown) => (err ? reject(err) : resolve()))).catch(reject);
  });
}

/**
 * `host` (a Host header) names `base`'s host: the same name (any case), and the same port when it
 * names one (the scheme's default port counts). A proxy may pass the name alone (nginx's `$host`
 * drops the port): then the name decides.
 */
function sameHost(host: string | undefined, base: URL): boolean {
  if (host === undefined) return true; // HTTP/1.0 without Host: nothing to compare
  let url: URL;
  try {
    url = new URL(`${base.protocol}//${host}`);
  } catch {
    return false;
  }
  return url.hostname === base.hostname && (!/:\d+$/.test(host) || url.port === base.port);
}

export function createPages(options: PagesOptions): Router {
  const { service, logger } = options;
  const base = new URL(options.publicBaseUrl);
  const origin = base.origin;
  const publicBase = options.publicBaseUrl.replace(/\/+$/, '');
  const router = express.Router();
  const form = keepContext(express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 }));

  /** Renders failures every page shares (rate limit, database down, the unexpected), as pages. */
  const failure = (req: Request, res: Response, err: unknown): void => {
    const traceId = req.traceId ?? newTraceId();
    const answer = toProblem(err, { traceId, instance: req.path });
    res.locals.problemCode = answer.body.code;
    for (const name of ['Retry-After', 'RateLimit', 'RateLimit-Policy']) if (answer.headers[name]) res.setHeader(name, answer.headers[name]);
    if (answer.status === 429) {
      const wait = Number(answer.headers['Retry-After'] ?? 60);
      send(res, 429, 'Too many attempts', html`<p class="bad" role="alert">Too many attempts from this network. Try again in ${minutes(wait)}.</p>`);
      return;
    }
    if (answer.status === 503) {
      send(
        res,
        503,
        'Please try again shortly',
        html`<p class="bad" role="alert">The service cannot answer right now. Nothing was changed. Try again in a minute.</p>`,
      );
      return;
    }
    if (answer.unexpected) logger.error({ err, traceId, route: res.locals.route ?? null }, 'unhandled error');
    send(
      res,
      answer.status >= 500 ? 500 : answer.status,
      'Something went wrong',
      html`<p class="bad" role="alert">Something went wrong on our side. Nothing was changed. Try again later; if it keeps happening, quote this reference: <code>${traceId}</code>.</p>`,
    );
  };

  /** Form posts: same origin only (when the browser says), the auth rate limit, then the handler; failures as pages. */
  const post =
    (handler: (req: Request, res: Response, f: Fields) => Promise<void>): RequestHandler =>
    async (req, res) => {
      res.locals.route = `POST ${req.path}`;
      try {
        const from = req.get('origin');
        if ((from !== undefined && from !== 'null' && from !== origin) || req.get('sec-fetch-site') === 'cross-site') {
          res.locals.problemCode = 'forbidden';
          send(res, 403, 'Not allowed', html`<p class="bad" role="alert">This form can only be sent from ${origin}.</p>`);
          return;
        }
        await run(options.authLimiter, req, res);
        await handler(req, res, fields(req.body));
      } catch (err) {
        failure(req, res, err);
      }
    };

  /**
   * Pages: on PUBLIC_BASE_URL's host only. Elsewhere (127.0.0.1 for localhost, an instance's own
   * address) the same path and query on PUBLIC_BASE_URL, before any form is shown: the form would
   * post to this origin, which is refused. The Host seen is X-Forwarded-Host behind a trusted proxy.
   */
  const get =
    (handler: (req: Request, res: Response, f: Fields) => void): RequestHandler =>
    (req, res) => {
      res.locals.route = `GET ${req.path}`;
      if (!sameHost(req.host, base)) {
        res.setHeader('Cache-Control', 'no-store');
        res.setHeader('Referrer-Policy', 'no-referrer');
        res.redirect(302, `${publicBase}${req.originalUrl}`);
        return;
      }
      handler(req, res, fields(req.query));
    };

  /**
   * The refusal a page explains in words: its code (recorded for the request log), or the error
   * thrown on, to the problem answer, when it is none of `codes`.
   */
  const refusal = <C extends string>(res: Response, err: unknown, codes: readonly C[]): C => {
    if (!(err instanceof HttpError) || !(codes as readonly string[]).includes(err.code)) throw err;
    res.locals.problemCode = err.code;
    return err.code as C;
  };

  // ---- /confirm-email -------------------------------------------------------------------------

  const confirmForm = (userId: string, token: string) =>
    html`<form method="post" action="/confirm-email">${hidden('userId', userId)}${hidden('token', token)}<button type="submit">Confirm my address</button></form>`;
  const resendForm = (userId: string) =>
    html`<form method="post" action="/confirm-email">${hidden('userId', userId)}${hidden('intent', 'resend')}<button type="submit">Send me a new link</button></form>`;

  router.get(
    '/confirm-email',
    get((_req, res, f) => {
      if (!okUserId(f.userId) || !okToken(f.token)) return incomplete(res);
      send(res, 200, 'Confirm your e-mail address', html`<p>Press the button to confirm that this address is yours.</p>${confirmForm(f.userId, f.token)}`);
    }),
  );
  router.post(
    '/confirm-email',
    form,
    post(async (_req, res, f) => {
      if (!okUserId(f.userId)) return incomplete(res);
      if (f.intent === 'resend') {
        // The same operation as POST /api/v1/auth/resend-confirmation, for the account the link
        // was for: nothing is mailed when the address is already confirmed, and the five-minute
        // cooldown holds. The mail goes only to the account's own address.
        try {
          await service.resendConfirmation(f.userId);
        } catch (err) {
          refusal(res, err, ['resend_cooldown']);
          return send(
            res,
            429,
            'A new link is already on its way',
            html`<p class="bad" role="alert">A confirmation mail went out less than five minutes ago. Check your inbox (and the spam folder), or ask again in a few minutes.</p>`,
          );
        }
        return send(
          res,
          200,
          'Check your inbox',
          html`<p class="ok" role="status">If this address still needs confirming, a new link is on its way. It works for 48 hours.</p>`,
        );
      }
      if (!okToken(f.token)) return incomplete(res);
      try {
        await service.confirmEmail(f.userId, f.token);
      } catch (err) {
        refusal(res, err, ['invalid_token']);
        return send(
          res,
          400,
          'This link has expired',
          html`<p class="bad" role="alert">This confirmation link has expired or was already used.</p><p>We can send you a new one.</p>${resendForm(f.userId)}`,
        );
      }
      send(res, 200, 'Your e-mail address is confirmed', html`<p class="ok" role="status">Confirmed. You can close this page and go back to the app.</p>`);
    }),
  );

  // ---- /confirm-email-change ------------------------------------------------------------------

  router.get(
    '/confirm-email-change',
    get((_req, res, f) => {
      if (!okUserId(f.userId) || !okEmail(f.newEmail) || !okToken(f.token)) return incomplete(res);
      send(
        res,
        200,
        'Confirm your new address',
        html`<p>Press the button to sign in with <strong>${f.newEmail}</strong> from now on. You will be signed out on your other devices.</p>
<form method="post" action="/confirm-email-change">${hidden('userId', f.userId)}${hidden('newEmail', f.newEmail)}${hidden('token', f.token)}<button type="submit">Use this address</button></form>`,
      );
    }),
  );
  router.post(
    '/confirm-email-change',
    form,
    post(async (_req, res, f) => {
      if (!okUserId(f.userId) || !okEmail(f.newEmail) || !okToken(f.token)) return incomplete(res);
      try {
        await service.confirmEmailChange(f.userId, f.newEmail, f.token);
      } catch (err) {
        refusal(res, err, ['invalid_token']);
        return send(
          res,
          400,
          'This link no longer works',
          html`<p class="bad" role="alert">This link has expired, was already used, or the address now belongs to another account.</p>
<p>Your sign-in address has not changed. To change it, ask for the change again in the app.</p>`,
        );
      }
      send(
        res,
        200,
        'Your address is changed',
        html`<p class="ok" role="status">From now on you sign in with <strong>${f.newEmail}</strong>. You were signed out on your other devices; sign in there again with the new address.</p>`,
      );
    }),
  );

  // ---- /reset-password ------------------------------------------------------------------------

  const rules = `Use ${PASSWORD_MIN} to ${PASSWORD_MAX} characters. Any characters are allowed; a few words make a good password. Passwords known from data breaches are refused.`;
  const resetForm = (email: string, token: string, problem?: string) =>
    html`${problem ? html`<p class="bad" role="alert" id="problem">${problem}</p>` : ''}
<form method="post" action="/reset-password">
${hidden('email', email)}${hidden('token', token)}
<input type="text" name="username" value="${email}" autocomplete="username" hidden>
<label for="newPassword">New password</label>
<input type="password" id="newPassword" name="newPassword" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" aria-describedby="rules${problem ? ' problem' : ''}"${problem ? html` aria-invalid="true" autofocus` : ''}>
<p class="hint" id="rules">${rules}</p>
<button type="submit">Set new password</button>
</form>`;

  router.get(
    '/reset-password',
    get((_req, res, f) => {
      if (!okEmail(f.email) || !okToken(f.token)) return incomplete(res);
      send(res, 200, 'Choose a new password', html`<p>For <strong>${f.email}</strong>.</p>${resetForm(f.email, f.token)}`);
    }),
  );
  router.post(
    '/reset-password',
    form,
    post(async (_req, res, f) => {
      if (!okEmail(f.email)) return incomplete(res);
      if (f.intent === 'forgot') {
        // The same operation as POST /api/v1/auth/forgot-password: silent about whether the
        // address has an account, at most one mail per five minutes.
        await service.forgotPassword(f.email);
        return send(
          res,
          200,
          'Check your inbox',
          html`<p class="ok" role="status">If an account uses ${f.email}, a new link is on its way. It works for one hour.</p>`,
        );
      }
      if (!okToken(f.token)) return incomplete(res);
      const password = f.newPassword ?? '';
      const again = (status: number, code: string, problem: string) => {
        res.locals.problemCode = code;
        send(res, status, 'Choose a new password', html`<p>For <strong>${f.email}</strong>.</p>${resetForm(f.email as string, f.token as string, problem)}`);
      };
      if (passwordLength(password) > PASSWORD_MAX) return again(400, 'value_too_long', `That password is too long. ${rules}`);
      try {
        await service.resetPassword(f.email, f.token, password);
      } catch (err) {
        const code = refusal(res, err, ['password_rejected', 'password_pwned', 'invalid_token']);
        if (code === 'password_rejected') return again(400, code, `That password is too short. ${PASSWORD_RULES}.`);
        if (code === 'password_pwned') return again(400, code, 'That password has appeared in a data breach, so others may try it. Choose a different one.');
        return send(
          res,
          400,
          'This link has expired',
          html`<p class="bad" role="alert">This reset link has expired or was already used. Your password has not changed.</p>
<p>We can send a new link to <strong>${f.email}</strong>.</p>
<form method="post" action="/reset-password">${hidden('email', f.email)}${hidden('intent', 'forgot')}<button type="submit">Send me a new link</button></form>`,
        );
      }
      send(
        res,
        200,
        'Your password is changed',
        html`<p class="ok" role="status">Sign in with your new password. You were signed out everywhere else, and your e-mail address is confirmed.</p>`,
      );
    }),
  );

  // ---- /login ---------------------------------------------------------------------------------

  // The link of every notice mail, and where a browser sign-in with Google or Apple lands when it
  // fails. The web client's sign-in when there is one; else a page that says where to sign in, with
  // the same "send me a reset link" form as an expired reset link's page.
  router.get('/login', (_req, res, next) => {
    if (!options.webClientUrl) return next();
    res.locals.route = 'GET /login';
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, options.webClientUrl);
  });
  router.get(
    '/login',
    get((_req, res) =>
      send(
        res,
        200,
        'Sign in',
        html`<p>Sign in in the Meal Planner app with your e-mail address and password, or with Google or Apple if that is how you joined.</p>
<p>Forgot your password? We can mail you a link to choose a new one.</p>
<form method="post" action="/reset-password">${hidden('intent', 'forgot')}
<label for="email">E-mail address</label>
<input type="email" id="email" name="email" autocomplete="email" required maxlength="${MAX_EMAIL}">
<button type="submit">Send me a reset link</button>
</form>`,
      ),
    ),
  );

  // ---- /sign-in/verify -------------------------------------------------------------------------

  // A browser sign-in with Google or Apple of an account with TOTP on lands here (decisions.md §8)
  // with its mfaToken: the form asks for the code (or a recovery code), and a right one signs the
  // browser in and lands on the sign-in's returnUrl. The token is useless without the code, lives
  // five minutes and is single use; the page keeps it out of Referer and caches like every page.
  const okMfaToken = (v: string | undefined): v is string => v !== undefined && v.length > 0 && v.length <= MAX_TOKEN;
  const verifyForm = (mfaToken: string, problem?: string) =>
    html`${problem ? html`<p class="bad" role="alert" id="problem">${problem}</p>` : ''}
<form method="post" action="/sign-in/verify">${hidden('mfaToken', mfaToken)}
<label for="code">Code from your authenticator app</label>
<input type="text" id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="20"${problem ? html` aria-invalid="true" autofocus` : ''}>
<label for="recoveryCode">Or a recovery code</label>
<input type="text" id="recoveryCode" name="recoveryCode" autocomplete="off" maxlength="40">
<button type="submit">Continue</button>
</form>`;
  const expired = (res: Response) =>
    send(res, 401, 'Sign in again', html`<p class="bad" role="alert">This sign-in expired or was already completed. Start again from the sign-in page.</p>`);
  router.get(
    '/sign-in/verify',
    get((_req, res, f) => {
      if (!okMfaToken(f.mfaToken)) return incomplete(res);
      send(res, 200, 'Two-step sign-in', html`<p>Enter the code your authenticator app shows for Meal Planner.</p>${verifyForm(f.mfaToken)}`);
    }),
  );
  router.post(
    '/sign-in/verify',
    form,
    // The session middleware, so that a right code can sign this browser in.
    ...service.sessions.authenticate,
    post(async (req, res, f) => {
      const gate = service.secondFactors;
      if (!okMfaToken(f.mfaToken) || !gate) return incomplete(res);
      const code = f.code?.trim() || undefined;
      const recoveryCode = f.recoveryCode?.trim() || undefined;
      if (!code && !recoveryCode) {
        res.locals.problemCode = 'validation_failed';
        return send(res, 400, 'Two-step sign-in', verifyForm(f.mfaToken, 'Enter the code from your authenticator app, or a recovery code.'));
      }
      let returnUrl: string | null;
      try {
        ({ returnUrl } = await gate.finish(req, { mfaToken: f.mfaToken, code, recoveryCode }));
      } catch (err) {
        const refused = refusal(res, err, ['invalid_code', 'invalid_credentials', 'account_locked']);
        if (refused === 'account_locked') {
          const retryAfter = (err as HttpError).headers?.['Retry-After'];
          if (retryAfter) res.setHeader('Retry-After', retryAfter);
          return send(
            res,
            423,
            'Too many wrong codes',
            html`<p class="bad" role="alert">Too many wrong codes or passwords: sign-in is locked for a few minutes. Try again later, or reset your password to lift the lock.</p>`,
          );
        }
        if (refused === 'invalid_code')
          return send(res, 400, 'Two-step sign-in', verifyForm(f.mfaToken, 'That code did not work. Codes change every 30 seconds; try the current one.'));
        return expired(res);
      }
      res.setHeader('Cache-Control', 'no-store');
      if (returnUrl) return res.redirect(303, returnUrl);
      send(res, 200, 'You are signed in', html`<p class="ok" role="status">You are signed in. You can close this page.</p>`);
    }),
  );

  // Any other method on these paths: 405 with the methods there are.
  for (const p of PAGE_PATHS) {
    router.all(p, (req, res) => {
      res.locals.route = `${req.method} ${p}`;
      res.setHeader('Allow', p === '/login' ? 'GET, HEAD' : 'GET, HEAD, POST');
      res.locals.problemCode = 'method_not_allowed';
      send(res, 405, 'Not available', html`<p class="bad" role="alert">This page can only be opened or its form sent.</p>`);
    });
  }
  return router;
}
