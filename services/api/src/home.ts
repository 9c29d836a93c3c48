import escapeHtml from 'escape-html';
import express, { type Router } from 'express';
import { DOCS_PATH } from './docs.js';

export const HOME_PATH = '/';

/** No script, no style, no form, nothing from elsewhere: links only. */
export const HOME_CSP = ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"].join('; ');

export interface HomeOptions {
  /** The service's name, as the OpenAPI document's title. */
  title: string;
  version: string;
  /** WEB_CLIENT_URL, linked when set. */
  webClientUrl?: string;
}

/**
 * GET /: a small page for a person who opens the service's address: its name and version, and
 * links to the API reference, the OpenAPI document, liveness and readiness (and the web client
 * when WEB_CLIENT_URL names one).
 */
export function homeRouter(options: HomeOptions): Router {
  const title = escapeHtml(options.title);
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
</head>
<body>
<main>
<h1>${title}</h1>
<p>Version ${escapeHtml(options.version)}. The HTTP/JSON API of the Meal Planner apps.</p>
<ul>
${options.webClientUrl ? `<li><a href="${escapeHtml(options.webClientUrl)}">Open Meal Planner</a></li>\n` : ''}<li><a href="${DOCS_PATH}">API reference</a> (every operation, to read in the browser)</li>
<li><a href="/api/v1/openapi.json">OpenAPI document</a> (OpenAPI 3.1, JSON, for tools and generated clients)</li>
<li><a href="/healthz">Health</a> (200 while the process serves) and <a href="/readyz">readiness</a> (200 while the database answers)</li>
</ul>
</main>
</body>
</html>
`;
  const router = express.Router();
  router.get(HOME_PATH, (_req, res) => {
    res.locals.route = `GET ${HOME_PATH}`;
    res.setHeader('Content-Security-Policy', HOME_CSP);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('html').send(page);
  });
  return router;
}

export const FAVICON_PATH = '/favicon.ico';

/**
 * GET /favicon.ico, which every browser asks for beside a page: 204, cached for a day, so that a
 * browser on the home page or the docs neither gets a 404 problem nor asks again on every page.
 */
export function faviconRouter(): Router {
  const router = express.Router();
  router.get(FAVICON_PATH, (_req, res) => {
    res.locals.route = `GET ${FAVICON_PATH}`;
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.status(204).end();
  });
  return router;
}
