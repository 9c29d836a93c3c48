/**
 * Anchor: the ceiling of an authenticated read (issue 44). Express 5 + helmet reading the service's
 * session cookie (its signature checked as express-session checks it: cookie-signature, the same
 * secret) and making ONE prepared PostgreSQL round trip, session → account → memberships, with the
 * MeResponse's JSON built by PostgreSQL, answered with `res.json`: the least work GET /me can do on
 * this stack. It reads the service's own tables (account_sessions, accounts, household_members,
 * households) in the bench database; it writes nothing (no renewal, no last-seen).
 *
 *   GET /api/v1/me   (1 query)
 *
 * BENCH_DATABASE_URL and SESSION_SECRET come from the environment; prints `port=<n>`.
 */
import http from 'node:http';
import * as cookie from 'cookie';
import signature from 'cookie-signature';
import express from 'express';
import helmet from 'helmet';
import pg from 'pg';
import { attachHarness, listen } from './harness.js';

// As many connections as the service's pool (@svc/db's default).
const pool = new pg.Pool({ connectionString: process.env.BENCH_DATABASE_URL, max: 10 });
const secret = process.env.SESSION_SECRET ?? '';
let queries = 0;

const ME = {
  name: 'ceiling_me',
  text: `select json_build_object(
           'user', json_build_object('id', a.id, 'email', a.email, 'displayName', a.display_name),
           'memberships', coalesce((select json_agg(json_build_object('householdId', m.household_id, 'householdName', h.name, 'role', m.role, 'memberId', m.id)
                                                    order by m.created_at, m.id)
                                      from household_members m join households h on h.id = m.household_id where m.user_id = a.id), '[]'::json),
           'isPlatformAdmin', false, 'emailConfirmed', a.email_confirmed, 'hasPassword', a.password_hash is not null, 'serverNow', null) as me
      from account_sessions s join accounts a on a.id = (s.sess->>'accountId')::uuid
     where s.sid = $1 and s.expire > now()`,
};

const app = express();
app.set('etag', false);
app.use(helmet());
app.get('/api/v1/me', async (req, res) => {
  const raw = cookie.parse(req.headers.cookie ?? '').service_session;
  const sid = raw?.startsWith('s:') ? signature.unsign(raw.slice(2), secret) : false;
  if (sid === false) {
    res.status(401).json({ title: 'unauthenticated' });
    return;
  }
  queries++;
  const { rows } = await pool.query<{ me: unknown }>({ ...ME, values: [sid] });
  if (!rows[0]) res.status(401).json({ title: 'unauthenticated' });
  else res.json(rows[0].me);
});

const server = await listen(http.createServer(app));
attachHarness(server, { queries: () => queries, close: () => pool.end() });
