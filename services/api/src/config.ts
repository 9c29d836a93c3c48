import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { looksLikeAddress, normalizeEmail } from '@svc/accounts';
import { type AppVersionFloors, parseAppVersionFloors, parseOrigin } from '@svc/http-kit';
import { availableCpus } from './cpus.js';
import { ConfigError, type Env, parseEnv } from './env.js';
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
   * The planner's solver: PLANNER_TIMEOUT_MS (default 20000; a solve over it ends its run `failed`)
   * and PLANNER_THREADS (worker threads solving at once; default one fewer than the CPUs the
   * container may use, at least 1, so the event loop keeps a core).
   */
  planner: { timeoutMs: number; threads: number };
  /**
   * HEAP_GROWING_PERCENT: how far V8 lets the heap grow past what the last full collection kept
   * before collecting again (V8's `--heap-growing-percent`; default 40); 0 leaves V8's own choice,
   * which on a machine with a lot of memory lets a busy instance's heap reach several times its
   * live data. Why 40: docs/benchmarks.md, "What the bench settled".
   */
  heapGrowingPercent: number;
  /**
   * HELPER_THREAD_NICE: the nice value (0–19, default 19) of every thread of the process but the
   * event loop's (libuv's pool, where bcrypt runs; V8's workers), so that on a busy host the event
   * loop runs first. 0 leaves them as the event loop. Linux only. Why: docs/benchmarks.md, "What the bench settled".
   */
  helperThreadNice: number;
  /**
   * THREADPOOL_IDLE (default on): libuv's pool threads (bcrypt, fs, dns) run under SCHED_IDLE —
   * only when no other thread wants the CPU — set with util-linux's `chrt` (nice 19 without it).
   * Linux only. Why: docs/benchmarks.md, "What the bench settled".
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

export { ConfigError };

/** A URL as the service keeps it: without trailing slashes (paths are appended to it). */
function bare(url: string): string {
  return url.replace(/\/+$/, '');
}

/** A comma-separated list: its entries trimmed, empty ones left out. */
function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function trustProxy(raw: string | undefined): Config['trustProxy'] {
  if (raw === undefined) return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw; // Express accepts subnets and names such as "loopback, 10.0.0.0/8"
}

/** The session secret: given (the schema checked its length and that production gives one), or in development made once and kept in DATA_DIR. */
function sessionSecret(given: string | undefined, dataDir: string): string {
  if (given) return given;
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
function adminEmails(value: string | undefined): string[] {
  return list(value).map((e) => {
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

/** FCM: both variables or neither (the schema says so); the service-account JSON is read here. */
function fcmConfig(e: Env): Config['fcm'] {
  if (!e.FCM_PROJECT_ID || !e.FCM_CREDENTIALS) return undefined;
  let credentials: { client_email?: unknown; private_key?: unknown; private_key_id?: unknown };
  try {
    credentials = JSON.parse(readFileOf('FCM_CREDENTIALS', e.FCM_CREDENTIALS));
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError('FCM_CREDENTIALS', 'is not a service-account JSON file');
  }
  if (typeof credentials.client_email !== 'string' || typeof credentials.private_key !== 'string')
    throw new ConfigError('FCM_CREDENTIALS', 'is not a service-account JSON file (client_email and private_key are needed)');
  return {
    projectId: e.FCM_PROJECT_ID,
    credentials: {
      client_email: credentials.client_email,
      private_key: credentials.private_key,
      ...(typeof credentials.private_key_id === 'string' ? { private_key_id: credentials.private_key_id } : {}),
    },
    url: bare(e.FCM_URL),
    tokenUrl: bare(e.FCM_TOKEN_URL),
  };
}

/** APNs: all four variables or none (the schema says so); the .p8 key is read here. */
function apnsConfig(e: Env): Config['apns'] {
  if (!e.APNS_KEY_ID || !e.APNS_TEAM_ID || !e.APNS_KEY || !e.APNS_TOPIC) return undefined;
  const key = readFileOf('APNS_KEY', e.APNS_KEY);
  if (!key.includes('PRIVATE KEY')) throw new ConfigError('APNS_KEY', 'is not a .p8 key file');
  return { keyId: e.APNS_KEY_ID, teamId: e.APNS_TEAM_ID, key, topic: e.APNS_TOPIC, url: bare(e.APNS_URL) };
}

/** How a browser on this machine reaches a listener on `host`: the wildcard addresses are localhost. */
export function browserHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/** Each origin of a comma-separated list (http-kit's parseOrigin), or a ConfigError naming the variable. */
function origins(variable: string, value: string | undefined, other?: (o: string) => string | undefined): string[] {
  return list(value).map((o) => {
    const kept = other?.(o);
    if (kept !== undefined) return kept;
    try {
      return parseOrigin(o);
    } catch (err) {
      throw new ConfigError(variable, (err as Error).message);
    }
  });
}

/**
 * The configuration: the environment read by its schema (`EnvSchema`: types, bounds, defaults, what
 * goes together), then what a schema cannot say — lists, files, defaults that follow other variables.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const e = parseEnv(env);
  const dataDir = path.resolve(e.DATA_DIR);
  // Unset, it is where this process listens, as a browser would name it: a specific HOST (say
  // 127.0.0.1) is kept, so the URL the ready line prints is one the origin check accepts.
  const publicBaseUrl = bare(e.PUBLIC_BASE_URL ?? `http://${browserHost(e.HOST)}:${e.PORT}`);
  let floors: AppVersionFloors;
  try {
    floors = parseAppVersionFloors(e.APP_VERSION_FLOORS ?? '');
  } catch (err) {
    throw new ConfigError('APP_VERSION_FLOORS', (err as Error).message);
  }
  const appRedirectUris = list(e.APP_REDIRECT_URIS);
  for (const u of appRedirectUris) if (!URL.canParse(u)) throw new ConfigError('APP_REDIRECT_URIS', `"${u}" is not an absolute URI`);
  const corsOrigins = origins('CORS_ORIGINS', e.CORS_ORIGINS);
  // The default is PUBLIC_BASE_URL's host as it is (an address works for the API, though browsers
  // refuse an IP address as RP ID); a value set by hand must be a host name (the schema's pattern).
  const rpId = e.WEBAUTHN_RP_ID ?? new URL(publicBaseUrl).hostname.replace(/^\[|\]$/g, '');
  const webauthnOrigins = origins('WEBAUTHN_ORIGINS', e.WEBAUTHN_ORIGINS, (o) => {
    if (/^https?:/i.test(o)) return undefined;
    // An app's origin (android:apk-key-hash:…, ios:bundle-id:…) is compared as written.
    if (!/^[a-z][a-z0-9+.-]*:\S+$/i.test(o)) throw new ConfigError('WEBAUTHN_ORIGINS', `"${o}" is not an origin`);
    return o;
  });
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT === e.PORT)
    throw new ConfigError('METRICS_PORT', 'must differ from PORT (metrics are not served to the public)');
  const appleWeb =
    e.APPLE_CLIENT_ID && e.APPLE_TEAM_ID && e.APPLE_KEY_ID && e.APPLE_PRIVATE_KEY
      ? { clientId: e.APPLE_CLIENT_ID, teamId: e.APPLE_TEAM_ID, keyId: e.APPLE_KEY_ID, privateKey: e.APPLE_PRIVATE_KEY.replace(/\\n/g, '\n') }
      : undefined;
  return {
    nodeEnv: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir,
    publicBaseUrl,
    corsOrigins: [...new Set(corsOrigins)],
    webauthn: { rpId, origins: [...new Set([new URL(publicBaseUrl).origin, ...webauthnOrigins])] },
    sessionSecret: sessionSecret(e.SESSION_SECRET, dataDir),
    cookieSecure: e.COOKIE_SECURE ?? publicBaseUrl.startsWith('https:'),
    trustProxy: trustProxy(e.TRUST_PROXY),
    redisUrl: e.REDIS_URL,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    accessTokenSecret: e.ACCESS_TOKEN_SECRET,
    tokenRateLimit: e.TOKEN_RATE_LIMIT,
    tokenRateWindowSeconds: e.TOKEN_RATE_WINDOW_SECONDS,
    authRateLimit: e.AUTH_RATE_LIMIT,
    authRateWindowSeconds: e.AUTH_RATE_WINDOW_SECONDS,
    lockoutMaxFailures: e.LOCKOUT_MAX_FAILURES,
    lockoutSeconds: e.LOCKOUT_SECONDS,
    passwordBreachApi: e.PASSWORD_BREACH_API.toLowerCase() === 'off' ? undefined : bare(e.PASSWORD_BREACH_API),
    intakeMode: e.INTAKE_MODE,
    inviteCodes: list(e.INVITE_CODES),
    appVersionFloors: floors,
    platformAdminEmails: adminEmails(e.PLATFORM_ADMIN_EMAILS),
    sessionMaxAgeDays: e.SESSION_MAX_AGE_DAYS,
    unaskedMailPerAddress: e.UNASKED_MAIL_PER_ADDRESS,
    unaskedMailPerIp: e.UNASKED_MAIL_PER_IP,
    aiTurnsPerMonth: e.AI_TURNS_PER_MONTH,
    welcomeCredits: e.WELCOME_CREDITS,
    pushDefaultProvider: e.PUSH_DEFAULT_PROVIDER,
    fcm: fcmConfig(e),
    apns: apnsConfig(e),
    internalApiTokens: list(e.INTERNAL_API_TOKENS),
    google:
      e.GOOGLE_CLIENT_ID && e.GOOGLE_CLIENT_SECRET
        ? {
            clientId: e.GOOGLE_CLIENT_ID,
            clientSecret: e.GOOGLE_CLIENT_SECRET,
            authorizationUrl: bare(e.GOOGLE_AUTHORIZATION_URL),
            tokenUrl: bare(e.GOOGLE_TOKEN_URL),
            userInfoUrl: bare(e.GOOGLE_USERINFO_URL),
          }
        : undefined,
    apple: {
      web: appleWeb,
      authorizationUrl: bare(e.APPLE_AUTHORIZATION_URL),
      tokenUrl: bare(e.APPLE_TOKEN_URL),
      keysUrl: bare(e.APPLE_KEYS_URL),
      issuer: e.APPLE_ISSUER,
      nativeAudiences: list(e.APPLE_NATIVE_AUDIENCES),
    },
    appRedirectUris,
    webPages: e.WEB_PAGES,
    webClientUrl: e.WEB_CLIENT_URL === undefined ? undefined : bare(e.WEB_CLIENT_URL),
    shutdownDrainSeconds: e.SHUTDOWN_DRAIN_SECONDS,
    shutdownTimeoutSeconds: e.SHUTDOWN_TIMEOUT_SECONDS,
    metricsPort: e.METRICS_PORT,
    dbStatementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    dbUnansweredMs: e.DB_UNANSWERED_MS,
    dbTransactionPooling: e.DB_TRANSACTION_POOLING,
    heapGrowingPercent: e.HEAP_GROWING_PERCENT ?? HEAP_GROWING_PERCENT_DEFAULT,
    helperThreadNice: e.HELPER_THREAD_NICE ?? HELPER_THREAD_NICE_DEFAULT,
    threadpoolIdle: e.THREADPOOL_IDLE,
    passwordHashWorkers: e.PASSWORD_HASH_WORKERS ?? Math.min(4, Math.max(1, availableCpus() - 1)),
    planner: { timeoutMs: e.PLANNER_TIMEOUT_MS, threads: e.PLANNER_THREADS ?? Math.max(1, availableCpus() - 1) },
    instanceId: e.INSTANCE_ID ?? os.hostname(),
    ruleParser: e.RULE_PARSER_URL
      ? { url: bare(e.RULE_PARSER_URL), model: e.RULE_PARSER_MODEL, apiKey: e.RULE_PARSER_API_KEY, timeoutMs: e.RULE_PARSER_TIMEOUT_MS }
      : undefined,
  };
}
