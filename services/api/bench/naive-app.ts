/**
 * Anchor: GET /api/v1/me the way a naive Express app does it. express-session with
 * connect-pg-simple (its own `session` table in the bench database), the session re-saved on every
 * hit (resave + rolling), then the account row and the memberships read with node-postgres from
 * the service's own tables (accounts, household_members, households), answered as a MeResponse.
 *
 *   POST /login { email }   bench-only sign-in (no password): puts the account in a new session
 *   GET  /api/v1/me         the measured read (4 queries: session, account, memberships, session upsert)
 *   PATCH /api/v1/households/:id, POST /api/v1/households/:id/events, PUT …/events/:eventId
 *                           the naive write (issue 44): the session as above, then ONE UPDATE or
 *                           INSERT in a transaction (BEGIN, the statement with an Owner/Adult check
 *                           in its WHERE, COMMIT) on the service's own tables, whose triggers (the
 *                           changes feed, list versions, jobs) fire as they do for the service;
 *                           the row answered as JSON (no validation beyond PostgreSQL's types)
 *
 * BENCH_DATABASE_URL and SESSION_SECRET come from the environment; prints `port=<n>`.
 */
import http from 'node:http';
import connectPgSimple from 'connect-pg-simple';
import express from 'express';
import session from 'express-session';
import pg from 'pg';
import { attachHarness, listen } from './harness.js';

declare module 'express-session' {
  interface SessionData {
    accountId: string;
  }
}

const pool = new pg.Pool({ connectionString: process.env.BENCH_DATABASE_URL, max: 20 });
// Counts every query, the store's included (read by the bench through the harness).
let queries = 0;
const poolQuery = pool.query.bind(pool) as (...args: unknown[]) => unknown;
(pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
  queries++;
  return poolQuery(...args);
};

// connect-pg-simple's own table layout (its table.sql).
await pool.query(`create table if not exists "session" (
  "sid" varchar not null collate "default" primary key,
  "sess" json not null,
  "expire" timestamp(6) not null)`);
await pool.query('create index if not exists "IDX_session_expire" on "session" ("expire")');

const PgStore = connectPgSimple(session);
const app = express();
app.use(express.json());
app.use(
  session({
    store: new PgStore({ pool, tableName: 'session' }),
    secret: process.env.SESSION_SECRET ?? 'naive anchor secret of the bench, 32+ chars',
    name: 'naive_session',
    resave: true,
    rolling: true,
    saveUninitialized: false,
    cookie: { httpOnly: true, sameSite: 'lax', maxAge: 30 * 24 * 3600 * 1000 },
  }),
);

app.post('/login', async (req, res) => {
  const email = String(req.body?.email ?? '').toLowerCase();
  const { rows } = await pool.query<{ id: string }>('select id from accounts where email_normalized = $1', [email]);
  if (!rows[0]) {
    res.status(401).json({ title: 'invalid_credentials' });
    return;
  }
  req.session.accountId = rows[0].id;
  res.json({ ok: true });
});

interface AccountRow {
  id: string;
  email: string | null;
  display_name: string;
  email_confirmed: boolean;
  has_password: boolean;
}
interface MembershipRow {
  household_id: string;
  household_name: string;
  role: string;
  member_id: string;
}

app.get('/api/v1/me', async (req, res) => {
  const accountId = req.session.accountId;
  if (!accountId) {
    res.status(401).json({ title: 'unauthorized' });
    return;
  }
  const account = (
    await pool.query<AccountRow>('select id, email, display_name, email_confirmed, password_hash is not null as has_password from accounts where id = $1', [
      accountId,
    ])
  ).rows[0];
  if (!account) {
    res.status(401).json({ title: 'unauthorized' });
    return;
  }
  const memberships = (
    await pool.query<MembershipRow>(
      `select h.id as household_id, h.name as household_name, m.role, m.id as member_id
         from accounts a
         join household_members m on m.user_id = a.id
         join households h on h.id = m.household_id
        where a.id = $1
        order by h.created_at, h.id`,
      [accountId],
    )
  ).rows;
  res.json({
    user: { id: account.id, email: account.email, displayName: account.display_name },
    memberships: memberships.map((m) => ({ householdId: m.household_id, householdName: m.household_name, role: m.role, memberId: m.member_id })),
    isPlatformAdmin: false,
    emailConfirmed: account.email_confirmed,
    hasPassword: account.has_password,
    serverNow: new Date().toISOString(),
  });
});

/** One statement in a transaction on a client of the pool; its first row, or undefined. */
async function inTransaction(text: string, values: unknown[]): Promise<Record<string, unknown> | undefined> {
  const client = await pool.connect();
  try {
    queries += 3;
    await client.query('begin');
    const { rows } = await client.query(text, values);
    await client.query('commit');
    return rows[0];
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
const WRITER = `exists (select 1 from household_members m where m.household_id = $1 and m.user_id = $2 and m.role in ('Owner', 'Adult'))`;
const answer = (res: express.Response, row: Record<string, unknown> | undefined, status = 200) => {
  if (row) res.status(status).json(row);
  else res.status(404).json({ title: 'not_found' });
};
interface EventBody {
  date: string;
  eventType: string;
  servingTime: string;
  availableCookingMinutes: number;
  notes: string;
  participants: unknown[];
}
const eventValues = (b: EventBody) => [b.date, b.eventType, b.servingTime, b.availableCookingMinutes, b.notes, JSON.stringify(b.participants)];

app.patch('/api/v1/households/:householdId', async (req, res) => {
  if (!req.session.accountId) {
    res.status(401).json({ title: 'unauthorized' });
    return;
  }
  const row = await inTransaction(
    `update households set name = coalesce($3, name), max_new_dishes_per_week = coalesce($4, max_new_dishes_per_week), updated_at = now()
      where id = $1 and ${WRITER} returning id, name, max_new_dishes_per_week, updated_at`,
    [req.params.householdId, req.session.accountId, req.body?.name ?? null, req.body?.maxNewDishesPerWeek ?? null],
  );
  answer(res, row);
});
app.post('/api/v1/households/:householdId/events', async (req, res) => {
  if (!req.session.accountId) {
    res.status(401).json({ title: 'unauthorized' });
    return;
  }
  const row = await inTransaction(
    `insert into meal_events (id, household_id, date, event_type, serving_time, available_cooking_minutes, notes, participants, created_at, updated_at)
     select gen_random_uuid(), $1, $3, $4, $5, $6, $7, $8, now(), now() where ${WRITER}
     returning id, date, event_type, serving_time, available_cooking_minutes, notes, participants, created_at, updated_at`,
    [req.params.householdId, req.session.accountId, ...eventValues(req.body as EventBody)],
  );
  answer(res, row, 201);
});
app.put('/api/v1/households/:householdId/events/:eventId', async (req, res) => {
  if (!req.session.accountId) {
    res.status(401).json({ title: 'unauthorized' });
    return;
  }
  const row = await inTransaction(
    `update meal_events set date = $4, event_type = $5, serving_time = $6, available_cooking_minutes = $7, notes = $8, participants = $9, updated_at = now()
      where household_id = $1 and id = $3 and ${WRITER}
      returning id, date, event_type, serving_time, available_cooking_minutes, notes, participants, created_at, updated_at`,
    [req.params.householdId, req.session.accountId, req.params.eventId, ...eventValues(req.body as EventBody)],
  );
  answer(res, row);
});

const server = await listen(http.createServer(app));
attachHarness(server, { queries: () => queries, close: () => pool.end() });
