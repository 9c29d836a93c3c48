import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { looksLikeAddress, normalizeEmail } from '@svc/accounts';
import { type AppVersionFloors, parseAppVersionFloors, parseOrigin } from '@svc/http-kit';
import { availableCpus } from './cpus.js';
import { HEAP_GROWING_PERCENT_DEFAULT } from './heap.js';
import { HELPER_THREAD_NICE_DEFAULT } from './threads.js';

/** Everything the service reads from its environment (the contract's variables and this project's own, listed in docs/configuration.md), parsed and checked once. */
export interface Config {
  nodeEnv: string;
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  publicBaseUrl: string;
  /**
   * CORS_ORIGINS: exact origins (`https://app.example.com`, comma-separated) of web clients allowed
   * to call the API from another origin, with the session cookie (CORS with credentials; the CSRF
   * check accepts them too). Empty (the default): same-origin only, no CORS header is ever sent.
   */
  corsOrigins: string[];
  /** WEBAUTHN_RP_ID (default: PUBLIC_BASE_URL's host, without port) and the origins passkey ceremonies may come from: PUBLIC_BASE_URL's origin plus WEBAUTHN_ORIGINS (apps' origins, e.g. `android:apk-key-hash:…`). */
  webauthn: { rpId: string; origins: string[] };
  sessionSecret: string;
  /** ACCESS_TOKEN_SECRET: the key of personal access tokens' keyed hash; undefined: derived from SESSION_SECRET. */
  accessTokenSecret: string | undefined;
  /** TOKEN_RATE_LIMIT / TOKEN_RATE_WINDOW_SECONDS: requests per personal access token per window (default 600 / 60). */
  tokenRateLimit: number;
  tokenRateWindowSeconds: number;
  cookieSecure: boolean;
  trustProxy: boolean | number | string | undefined;
  redisUrl: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  authRateLimit: number;
  authRateWindowSeconds: number;
  lockoutMaxFailures: number;
  lockoutSeconds: number;
  passwordBreachApi: string | undefined;
  intakeMode: 'open' | 'invite' | 'paused';
  inviteCodes: string[];
  appVersionFloors: AppVersionFloors;
  platformAdminEmails: string[];
  /** SESSION_MAX_AGE_DAYS: a session signed in longer ago than this is over, however much it is used (default 90). */
  sessionMaxAgeDays: number;
  /** UNASKED_MAIL_PER_ADDRESS: unasked mails (reset, confirmation, change-of-address, account-exists) per recipient address an hour (default 5). */
  unaskedMailPerAddress: number;
  /** UNASKED_MAIL_PER_IP: distinct recipient addresses one client IP may have sent unasked mail an hour (default 100). */
  unaskedMailPerIp: number;
  aiTurnsPerMonth: number;
  welcomeCredits: number;
  pushDefaultProvider: string;
  /** FCM HTTP v1 (FCM_PROJECT_ID + FCM_CREDENTIALS, the service-account JSON read at start-up); undefined: FCM pushes are written to DATA_DIR/push. */
  fcm: { projectId: string; credentials: { client_email: string; private_key: string; private_key_id?: string }; url: string; tokenUrl: string } | undefined;
  /** APNs with a token (APNS_KEY_ID, APNS_TEAM_ID, APNS_KEY = path of the .p8, APNS_TOPIC); undefined: APNs pushes are written to DATA_DIR/push. */
  apns: { keyId: string; teamId: string; key: string; topic: string; url: string } | undefined;
  /** INTERNAL_API_TOKENS: bearer tokens of the platform's other services; empty: the internal route answers 404. */
  internalApiTokens: string[];
  google: { clientId: string; clientSecret: string; authorizationUrl: string; tokenUrl: string; userInfoUrl: string } | undefined;
  apple: {
    web: { clientId: string; teamId: string; keyId: string; privateKey: string } | undefined;
    authorizationUrl: string;
    tokenUrl: string;
    keysUrl: string;
    issuer: string;
    nativeAudiences: string[];
  };
  appRedirectUris: string[];
  /** Seconds an instance keeps serving after SIGTERM (readiness already 503, every answer `Connection: close`) so the balancer stops sending before it closes. */
  shutdownDrainSeconds: number;
  /** Seconds in-flight requests may take to finish after the drain before the process gives up (exit 1). */
  shutdownTimeoutSeconds: number;
  /** Port of the Prometheus /metrics listener; undefined: no metrics listener. */
  metricsPort: number | undefined;
  /** statement_timeout of API queries in ms (the client gives up a second later); 0: none. Migrations run without it. */
  dbStatementTimeoutMs: number;
  /**
   * DB_UNANSWERED_MS (default 1000; 0 off): a database that answers nothing on any connection for
   * this long while queries wait, and whose probe (a new connection's `select 1`) does not answer
   * either, is taken as frozen: waiting and new requests answer 503 `service_unavailable` at once
   * until a probe answers (see @svc/db's ConnectionWatch).
   */
  dbUnansweredMs: number;
  /**
   * Concurrent bcrypt jobs: PASSWORD_HASH_WORKERS, default one fewer than the CPUs the container may
   * use (cgroup limit), 1 to 4: one core stays with the event loop, so a login storm does not starve
   * other requests (the benchmark's login-storm scenario measured it).
   */
  passwordHashWorkers: number;
  /**
   * HEAP_GROWING_PERCENT: how far V8 lets the heap grow past what the last full collection kept
   * before collecting again (V8's `--heap-growing-percent`; default 40); 0 leaves V8's own choice,
   * which on a machine with a lot of memory lets a busy instance's heap reach several times its
   * live data. docs/benchmarks.md has what the benchmark measured.
   */
  heapGrowingPercent: number;
  /**
   * HELPER_THREAD_NICE: the nice value (0–19, default 19) of every thread of the process but the
   * event loop's (libuv's pool, where bcrypt runs; V8's workers), so that on a busy host the event
   * loop runs first. 0 leaves them as the event loop. Linux only. docs/benchmarks.md has the numbers.
   */
  helperThreadNice: number;
  /**
   * THREADPOOL_IDLE (default on): libuv's pool threads (bcrypt, fs, dns) run under SCHED_IDLE —
   * only when no other thread wants the CPU — set with util-linux's `chrt` (nice 19 without it).
   * Linux only. docs/benchmarks.md has the numbers.
   */
  threadpoolIdle: boolean;
  /** DATABASE_URL is PgBouncer (or another pooler) in transaction mode: statement_timeout is not sent at connect (set it on the role). */
  dbTransactionPooling: boolean;
  /** Names this instance on every log line and metric (default: the host name). */
  instanceId: string;
  /** An OpenAI-compatible chat-completions endpoint for the rule parser; undefined: the offline parser only. */
  ruleParser: { url: string; model: string; apiKey: string | undefined; timeoutMs: number } | undefined;
  /** WEB_PAGES (default on): serve the pages of the mailed links (/confirm-email, /confirm-email-change, /reset-password, /login); off where a web client serves them. */
  webPages: boolean;
  /** WEB_CLIENT_URL: a web client's sign-in page; `/login` (linked from every notice mail) redirects there, and GET / links to it. Undefined: `/login` is a page of the service. */
  webClientUrl: string | undefined;
}

/** A configuration value that cannot be used; start-up prints `message` as its one line. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be from ${min} to ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = str(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, fallback: string, protocols = ['http:', 'https:']): string {
  const raw = str(env, name) ?? fallback;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute URL, got "${raw}"`);
  }
  if (!protocols.includes(u.protocol)) throw new ConfigError(name, `must be a ${protocols.join(' or ')} URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

function list(env: Env, name: string): string[] {
  return (str(env, name) ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function trustProxy(env: Env): Config['trustProxy'] {
  const raw = str(env, 'TRUST_PROXY');
  if (raw === undefined) return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw; // Express accepts subnets and names such as "loopback, 10.0.0.0/8"
}

/** ACCESS_TOKEN_SECRET when set (32+ characters); else the tokens' key is derived from SESSION_SECRET. */
function accessTokenSecret(env: Env): string | undefined {
  const given = str(env, 'ACCESS_TOKEN_SECRET');
  if (given !== undefined && given.length < 32) throw new ConfigError('ACCESS_TOKEN_SECRET', 'must be at least 32 characters');
  return given;
}

/** The session secret: given, or in development made once and kept in DATA_DIR. */
function sessionSecret(env: Env, nodeEnv: string, dataDir: string): string {
  const given = str(env, 'SESSION_SECRET');
  if (given) {
    if (given.length < 32) throw new ConfigError('SESSION_SECRET', 'must be at least 32 characters');
    return given;
  }
  if (nodeEnv === 'production') throw new ConfigError('SESSION_SECRET', 'is required when NODE_ENV=production');
  const file = path.join(dataDir, 'session-secret');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    fs.mkdirSync(dataDir, { recursive: true });
    const secret = crypto.randomBytes(48).toString('base64url');
    try {
      fs.writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
      return secret;
    } catch {
      // another instance wrote it first
      return fs.readFileSync(file, 'utf8').trim();
    }
  }
}

/** PLATFORM_ADMIN_EMAILS: each entry an address in the documented form (as register accepts), kept in canonical form. */
function adminEmails(env: Env): string[] {
  return list(env, 'PLATFORM_ADMIN_EMAILS').map((e) => {
    if (!looksLikeAddress(e)) throw new ConfigError('PLATFORM_ADMIN_EMAILS', `"${e}" is not a plain e-mail address (name@example.com)`);
    return normalizeEmail(e);
  });
}

/** The contents of a file a variable names (a key or credentials), or a ConfigError naming the variable. */
function readFileOf(name: string, file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(name, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function fcmConfig(env: Env): Config['fcm'] {
  const projectId = str(env, 'FCM_PROJECT_ID');
  const path_ = str(env, 'FCM_CREDENTIALS');
  if (!projectId && !path_) return undefined;
  if (!projectId || !path_) throw new ConfigError(projectId ? 'FCM_CREDENTIALS' : 'FCM_PROJECT_ID', 'FCM needs both FCM_PROJECT_ID and FCM_CREDENTIALS');
  let credentials: { client_email?: unknown; private_key?: unknown; private_key_id?: unknown };
  try {
    credentials = JSON.parse(readFileOf('FCM_CREDENTIALS', path_));
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError('FCM_CREDENTIALS', 'is not a service-account JSON file');
  }
  if (typeof credentials.client_email !== 'string' || typeof credentials.private_key !== 'string')
    throw new ConfigError('FCM_CREDENTIALS', 'is not a service-account JSON file (client_email and private_key are needed)');
  return {
    projectId,
    credentials: {
      client_email: credentials.client_email,
      private_key: credentials.private_key,
      ...(typeof credentials.private_key_id === 'string' ? { private_key_id: credentials.private_key_id } : {}),
    },
    url: url(env, 'FCM_URL', 'https://fcm.googleapis.com'),
    tokenUrl: url(env, 'FCM_TOKEN_URL', 'https://oauth2.googleapis.com/token'),
  };
}

function apnsConfig(env: Env): Config['apns'] {
  const vars = ['APNS_KEY_ID', 'APNS_TEAM_ID', 'APNS_KEY', 'APNS_TOPIC'] as const;
  const set = vars.filter((v) => str(env, v));
  if (set.length === 0) return undefined;
  if (set.length < vars.length) throw new ConfigError(vars.find((v) => !str(env, v))!, 'APNs needs APNS_KEY_ID, APNS_TEAM_ID, APNS_KEY and APNS_TOPIC');
  const key = readFileOf('APNS_KEY', str(env, 'APNS_KEY')!);
  if (!key.includes('PRIVATE KEY')) throw new ConfigError('APNS_KEY', 'is not a .p8 key file');
  return {
    keyId: str(env, 'APNS_KEY_ID')!,
    teamId: str(env, 'APNS_TEAM_ID')!,
    key,
    topic: str(env, 'APNS_TOPIC')!,
    url: url(env, 'APNS_URL', 'https://api.push.apple.com'),
  };
}

/** How a browser on this machine reaches a listener on `host`: the wildcard addresses are localhost. */
export function browserHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = str(env, 'NODE_ENV') ?? 'development';
  const port = int(env, 'PORT', 8080, 0, 65535);
  const dataDir = path.resolve(str(env, 'DATA_DIR') ?? '.data');
  // Unset, it is where this process listens, as a browser would name it: a specific HOST (say
  // 127.0.0.1) is kept, so the URL the ready line prints is one the origin check accepts.
  const host = str(env, 'HOST') ?? '0.0.0.0';
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', `http://${browserHost(host)}:${port}`);
  const databaseUrl = str(env, 'DATABASE_URL');
  // The production image carries no embedded PostgreSQL: a missing DATABASE_URL is a configuration error there.
  if (databaseUrl === undefined && (str(env, 'NODE_ENV') ?? 'development') === 'production')
    throw new ConfigError('DATABASE_URL', 'is required when NODE_ENV=production (the embedded PostgreSQL is for development)');
  if (databaseUrl !== undefined) url(env, 'DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:']);
  const redisUrl = str(env, 'REDIS_URL');
  if (redisUrl !== undefined) url(env, 'REDIS_URL', redisUrl, ['redis:', 'rediss:']);
  const smtpUrl = str(env, 'SMTP_URL');
  if (smtpUrl !== undefined) url(env, 'SMTP_URL', smtpUrl, ['smtp:', 'smtps:']);
  const breach = str(env, 'PASSWORD_BREACH_API') ?? 'https://api.pwnedpasswords.com';
  const intake = (str(env, 'INTAKE_MODE') ?? 'open').toLowerCase();
  if (!['open', 'invite', 'paused'].includes(intake)) throw new ConfigError('INTAKE_MODE', `must be open, invite or paused, got "${intake}"`);
  let floors: AppVersionFloors;
  try {
    floors = parseAppVersionFloors(str(env, 'APP_VERSION_FLOORS') ?? '');
  } catch (err) {
    throw new ConfigError('APP_VERSION_FLOORS', (err as Error).message);
  }
  const googleId = str(env, 'GOOGLE_CLIENT_ID');
  const googleSecret = str(env, 'GOOGLE_CLIENT_SECRET');
  if (Boolean(googleId) !== Boolean(googleSecret))
    throw new ConfigError(googleId ? 'GOOGLE_CLIENT_SECRET' : 'GOOGLE_CLIENT_ID', 'Google sign-in needs both GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET');
  const appleVars = ['APPLE_CLIENT_ID', 'APPLE_TEAM_ID', 'APPLE_KEY_ID', 'APPLE_PRIVATE_KEY'] as const;
  const appleSet = appleVars.filter((v) => str(env, v));
  if (appleSet.length > 0 && appleSet.length < appleVars.length) {
    throw new ConfigError(appleVars.find((v) => !str(env, v))!, 'Apple web sign-in needs APPLE_CLIENT_ID, APPLE_TEAM_ID, APPLE_KEY_ID and APPLE_PRIVATE_KEY');
  }
  const appRedirectUris = list(env, 'APP_REDIRECT_URIS');
  for (const u of appRedirectUris) {
    try {
      new URL(u);
    } catch {
      throw new ConfigError('APP_REDIRECT_URIS', `"${u}" is not an absolute URI`);
    }
  }
  const corsOrigins = list(env, 'CORS_ORIGINS').map((o) => {
    try {
      return parseOrigin(o);
    } catch (err) {
      throw new ConfigError('CORS_ORIGINS', (err as Error).message);
    }
  });
  const publicHttps = publicBaseUrl.startsWith('https:');
  // The default is PUBLIC_BASE_URL's host as it is (an address works for the API, though browsers
  // refuse an IP address as RP ID); a value set by hand must be a host name.
  const rpIdSet = str(env, 'WEBAUTHN_RP_ID')?.toLowerCase();
  if (rpIdSet !== undefined && (!/^[a-z0-9.-]+$/.test(rpIdSet) || rpIdSet.startsWith('.') || rpIdSet.endsWith('.')))
    throw new ConfigError('WEBAUTHN_RP_ID', 'must be a host name without scheme or port (e.g. example.com)');
  const rpId = rpIdSet ?? new URL(publicBaseUrl).hostname.replace(/^\[|\]$/g, '');
  const webauthnOrigins = list(env, 'WEBAUTHN_ORIGINS').map((o) => {
    if (/^https?:/i.test(o)) {
      try {
        return parseOrigin(o);
      } catch (err) {
        throw new ConfigError('WEBAUTHN_ORIGINS', (err as Error).message);
      }
    }
    // An app's origin (android:apk-key-hash:…, ios:bundle-id:…) is compared as written.
    if (!/^[a-z][a-z0-9+.-]*:\S+$/i.test(o)) throw new ConfigError('WEBAUTHN_ORIGINS', `"${o}" is not an origin`);
    return o;
  });
  const ruleParserUrl = str(env, 'RULE_PARSER_URL');
  const webClientUrl = str(env, 'WEB_CLIENT_URL');
  const metricsPort = str(env, 'METRICS_PORT') === undefined ? undefined : int(env, 'METRICS_PORT', 9464, 1, 65535);
  if (metricsPort !== undefined && metricsPort === port) throw new ConfigError('METRICS_PORT', 'must differ from PORT (metrics are not served to the public)');
  return {
    nodeEnv,
    port,
    host,
    databaseUrl,
    dataDir,
    publicBaseUrl,
    corsOrigins: [...new Set(corsOrigins)],
    webauthn: { rpId, origins: [...new Set([new URL(publicBaseUrl).origin, ...webauthnOrigins])] },
    sessionSecret: sessionSecret(env, nodeEnv, dataDir),
    cookieSecure: bool(env, 'COOKIE_SECURE', publicHttps),
    trustProxy: trustProxy(env),
    redisUrl,
    smtpUrl,
    mailFrom: str(env, 'MAIL_FROM') ?? 'Meal Planner <no-reply@localhost>',
    accessTokenSecret: accessTokenSecret(env),
    tokenRateLimit: int(env, 'TOKEN_RATE_LIMIT', 600, 1, 1_000_000_000),
    tokenRateWindowSeconds: int(env, 'TOKEN_RATE_WINDOW_SECONDS', 60, 1, 86_400),
    authRateLimit: int(env, 'AUTH_RATE_LIMIT', 100, 1, 1_000_000),
    authRateWindowSeconds: int(env, 'AUTH_RATE_WINDOW_SECONDS', 60, 1, 86_400),
    lockoutMaxFailures: int(env, 'LOCKOUT_MAX_FAILURES', 5, 1, 1000),
    lockoutSeconds: int(env, 'LOCKOUT_SECONDS', 300, 1, 86_400 * 7),
    passwordBreachApi: breach.toLowerCase() === 'off' ? undefined : url(env, 'PASSWORD_BREACH_API', breach),
    intakeMode: intake as Config['intakeMode'],
    inviteCodes: list(env, 'INVITE_CODES'),
    appVersionFloors: floors,
    platformAdminEmails: adminEmails(env),
    sessionMaxAgeDays: int(env, 'SESSION_MAX_AGE_DAYS', 90, 1, 3650),
    unaskedMailPerAddress: int(env, 'UNASKED_MAIL_PER_ADDRESS', 5, 1, 1_000_000),
    unaskedMailPerIp: int(env, 'UNASKED_MAIL_PER_IP', 100, 1, 1_000_000),
    aiTurnsPerMonth: int(env, 'AI_TURNS_PER_MONTH', 30, 0, 1_000_000),
    welcomeCredits: int(env, 'WELCOME_CREDITS', 20, 0, 1_000_000),
    pushDefaultProvider: str(env, 'PUSH_DEFAULT_PROVIDER') ?? 'fcm',
    fcm: fcmConfig(env),
    apns: apnsConfig(env),
    internalApiTokens: list(env, 'INTERNAL_API_TOKENS'),
    google:
      googleId && googleSecret
        ? {
            clientId: googleId,
            clientSecret: googleSecret,
            authorizationUrl: url(env, 'GOOGLE_AUTHORIZATION_URL', 'https://accounts.google.com/o/oauth2/v2/auth'),
            tokenUrl: url(env, 'GOOGLE_TOKEN_URL', 'https://oauth2.googleapis.com/token'),
            userInfoUrl: url(env, 'GOOGLE_USERINFO_URL', 'https://openidconnect.googleapis.com/v1/userinfo'),
          }
        : undefined,
    apple: {
      web:
        appleSet.length === appleVars.length
          ? {
              clientId: str(env, 'APPLE_CLIENT_ID')!,
              teamId: str(env, 'APPLE_TEAM_ID')!,
              keyId: str(env, 'APPLE_KEY_ID')!,
              privateKey: str(env, 'APPLE_PRIVATE_KEY')!.replace(/\\n/g, '\n'),
            }
          : undefined,
      authorizationUrl: url(env, 'APPLE_AUTHORIZATION_URL', 'https://appleid.apple.com/auth/authorize'),
      tokenUrl: url(env, 'APPLE_TOKEN_URL', 'https://appleid.apple.com/auth/token'),
      keysUrl: url(env, 'APPLE_KEYS_URL', 'https://appleid.apple.com/auth/keys'),
      issuer: str(env, 'APPLE_ISSUER') ?? 'https://appleid.apple.com',
      nativeAudiences: list(env, 'APPLE_NATIVE_AUDIENCES'),
    },
    appRedirectUris,
    webPages: bool(env, 'WEB_PAGES', true),
    webClientUrl: webClientUrl === undefined ? undefined : url(env, 'WEB_CLIENT_URL', webClientUrl),
    shutdownDrainSeconds: int(env, 'SHUTDOWN_DRAIN_SECONDS', 10, 0, 300),
    shutdownTimeoutSeconds: int(env, 'SHUTDOWN_TIMEOUT_SECONDS', 20, 1, 600),
    metricsPort,
    dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 5000, 0, 600_000),
    dbUnansweredMs: int(env, 'DB_UNANSWERED_MS', 1000, 0, 60_000),
    dbTransactionPooling: bool(env, 'DB_TRANSACTION_POOLING', false),
    heapGrowingPercent: int(env, 'HEAP_GROWING_PERCENT', HEAP_GROWING_PERCENT_DEFAULT, 0, 1000),
    helperThreadNice: int(env, 'HELPER_THREAD_NICE', HELPER_THREAD_NICE_DEFAULT, 0, 19),
    threadpoolIdle: bool(env, 'THREADPOOL_IDLE', true),
    passwordHashWorkers: int(env, 'PASSWORD_HASH_WORKERS', Math.min(4, Math.max(1, availableCpus() - 1)), 1, 64),
    instanceId: str(env, 'INSTANCE_ID') ?? os.hostname(),
    ruleParser: ruleParserUrl
      ? {
          url: url(env, 'RULE_PARSER_URL', ruleParserUrl),
          model: str(env, 'RULE_PARSER_MODEL') ?? 'llama3.1',
          apiKey: str(env, 'RULE_PARSER_API_KEY'),
          timeoutMs: int(env, 'RULE_PARSER_TIMEOUT_MS', 2000, 100, 60_000),
        }
      : undefined,
  };
}
