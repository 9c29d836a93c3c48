import { createRequire } from 'node:module';
import express, { type Router } from 'express';

/** Redoc's self-contained browser bundle, from the npm package: served from here, never from a CDN. */
const REDOC_BUNDLE = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

export const DOCS_PATH = '/api/v1/docs';
const BUNDLE_PATH = `${DOCS_PATH}/redoc.standalone.js`;
/** Every path the docs router serves. */
export const DOCS_PATHS = [DOCS_PATH, BUNDLE_PATH] as const;

/**
 * What Redoc needs and nothing more: its script from this origin; the document fetched from this
 * origin; inline styles (styled-components writes <style> elements at run time); images and
 * fonts as data: URIs (its icons); its search index runs in a Worker built from a blob: URL. No
 * frames, no forms, no <base>.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Household meal-planning service</title>
</head>
<body>
<redoc spec-url="/api/v1/openapi.json" hide-download-button="false" path-in-middle-panel="true" required-props-first="true"></redoc>
<noscript><p>This reference needs JavaScript. The document itself is at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p></noscript>
<script src="${BUNDLE_PATH}"></script>
</body>
</html>
`;

/** GET /api/v1/docs: the OpenAPI document rendered by Redoc, everything served by this service. */
export function docsRouter(): Router {
  const router = express.Router();
  router.get(DOCS_PATH, (_req, res) => {
    res.locals.route = `GET ${DOCS_PATH}`;
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.type('html').send(PAGE);
  });
  router.get(BUNDLE_PATH, (_req, res, next) => {
    res.locals.route = `GET ${BUNDLE_PATH}`;
    res.sendFile(REDOC_BUNDLE, { maxAge: '1d', headers: { 'Content-Type': 'text/javascript; charset=utf-8' } }, (err) => err && next(err));
  });
  return router;
}
