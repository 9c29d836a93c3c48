/**
 * Anchor: the ceiling. Express 5 + helmet answering constant JSON, with no session and no
 * database: what this stack can do on this machine at all. Two routes:
 *
 *   GET /api/v1/me                                → a constant MeResponse-shaped JSON (347 bytes)
 *   GET /api/v1/households/:householdId/events    → the service's real events page 1 of this run
 *
 * The events page is the transport floor of a page read: the same bytes the service sends (some
 * 35 kB), with nothing else to do. The bench hands the service's bytes over after seeding (harness
 * `fixture` 'events-page'; over IPC, so the measured app has no bench-only route); until then the
 * route answers 503. Both routes answer by `res.json` of a parsed object, so the page pays what /me
 * pays (JSON.stringify per request, Express's send) and the two differ only by the size of the
 * answer; the service too serializes its page on every request. ETag is off as in the service
 * (http-kit sets `etag` false): Express would otherwise hash every answer (26 µs a page, 2.5 µs a
 * /me, measured), work the service never does.
 * Prints `port=<n>`.
 */
import http from 'node:http';
import express from 'express';
import helmet from 'helmet';
import { attachHarness, listen } from './harness.js';

const me = {
  user: { id: '00000000-0000-4000-8000-000000000000', email: 'bench@example.com', displayName: 'Bench' },
  memberships: [
    { householdId: '00000000-0000-4000-8000-000000000001', householdName: 'Bench', role: 'Owner', memberId: '00000000-0000-4000-8000-000000000002' },
  ],
  isPlatformAdmin: false,
  emailConfirmed: false,
  hasPassword: true,
  serverNow: null,
};
let eventsPage: unknown;

const app = express();
app.set('etag', false);
app.use(helmet());
app.get('/api/v1/me', (_req, res) => {
  res.json(me);
});
app.get('/api/v1/households/:householdId/events', (_req, res) => {
  if (eventsPage === undefined) res.status(503).json({ error: 'the bench has not handed the events page over' });
  else res.json(eventsPage);
});

const server = await listen(http.createServer(app));
attachHarness(server, {
  fixture: (name, body) => {
    if (name !== 'events-page') return false;
    eventsPage = JSON.parse(body);
    return true;
  },
});
