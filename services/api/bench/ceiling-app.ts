/**
 * Anchor: the ceiling. Express 5 + helmet answering a constant MeResponse-shaped JSON to
 * GET /api/v1/me, with no session and no database: what this stack can do on this machine at all.
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

const app = express();
app.use(helmet());
app.get('/api/v1/me', (_req, res) => {
  res.json(me);
});

const server = await listen(http.createServer(app));
attachHarness(server);
