/**
 * Anchor: bare `node:http` answering a constant MeResponse-shaped JSON (no framework, no session,
 * no database): what this Node can do on this machine at all, below the Express ceilings.
 *
 *   GET /api/v1/me   (any path answers the same)
 *
 * Prints `port=<n>`.
 */
import http from 'node:http';
import { attachHarness, listen } from './harness.js';

const body = Buffer.from(
  JSON.stringify({
    user: { id: '00000000-0000-4000-8000-000000000000', email: 'bench@example.com', displayName: 'Bench' },
    memberships: [
      { householdId: '00000000-0000-4000-8000-000000000001', householdName: 'Bench', role: 'Owner', memberId: '00000000-0000-4000-8000-000000000002' },
    ],
    isPlatformAdmin: false,
    emailConfirmed: false,
    hasPassword: true,
    serverNow: null,
  }),
);

const server = await listen(
  http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  }),
);
attachHarness(server);
