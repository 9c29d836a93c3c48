import type { Infer, TypedSchema } from '@svc/http-kit';
import { Ajv, type ErrorObject } from 'ajv';

/**
 * The environment the service reads, as one JSON schema: each variable's type, bounds and default
 * (ajv coerces the strings and fills the defaults), and the rules between variables (a provider
 * configured by halves, what production requires). `docs/configuration.md` lists the same variables;
 * `test/config.test.ts` holds the two to each other. What a schema cannot say (lists of origins or
 * addresses, files a variable names, defaults that follow other variables) is parsed in config.ts.
 */
export const EnvSchema = {
  type: 'object',
  properties: {
    NODE_ENV: { type: 'string', default: 'development' },
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    HOST: { type: 'string', default: '0.0.0.0' },
    DATA_DIR: { type: 'string', default: '.data' },
    PUBLIC_BASE_URL: { type: 'string', format: 'http-url' },
    DATABASE_URL: { type: 'string', format: 'postgres-url' },
    WEB_PAGES: { type: 'boolean', default: true },
    WEB_CLIENT_URL: { type: 'string', format: 'http-url' },
    SESSION_SECRET: { type: 'string', minLength: 32 },
    ACCESS_TOKEN_SECRET: { type: 'string', minLength: 32 },
    TOKEN_RATE_LIMIT: { type: 'integer', minimum: 1, maximum: 1_000_000_000, default: 600 },
    TOKEN_RATE_WINDOW_SECONDS: { type: 'integer', minimum: 1, maximum: 86_400, default: 60 },
    COOKIE_SECURE: { type: 'boolean' },
    TRUST_PROXY: { type: 'string' },
    REDIS_URL: { type: 'string', format: 'redis-url' },
    SMTP_URL: { type: 'string', format: 'smtp-url' },
    MAIL_FROM: { type: 'string', default: 'Meal Planner <no-reply@localhost>' },
    AUTH_RATE_LIMIT: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 100 },
    AUTH_RATE_WINDOW_SECONDS: { type: 'integer', minimum: 1, maximum: 86_400, default: 60 },
    SESSION_MAX_AGE_DAYS: { type: 'integer', minimum: 1, maximum: 3650, default: 90 },
    UNASKED_MAIL_PER_ADDRESS: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 5 },
    UNASKED_MAIL_PER_IP: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 100 },
    CORS_ORIGINS: { type: 'string' },
    WEBAUTHN_RP_ID: {
      type: 'string',
      pattern: '^[a-z0-9-]+(\\.[a-z0-9-]+)*$',
      description: 'a host name without scheme or port (e.g. example.com)',
    },
    WEBAUTHN_ORIGINS: { type: 'string' },
    LOCKOUT_MAX_FAILURES: { type: 'integer', minimum: 1, maximum: 1000, default: 5 },
    LOCKOUT_SECONDS: { type: 'integer', minimum: 1, maximum: 604_800, default: 300 },
    PASSWORD_BREACH_API: { type: 'string', format: 'http-url-or-off', default: 'https://api.pwnedpasswords.com' },
    INTAKE_MODE: { type: 'string', enum: ['open', 'invite', 'paused'], default: 'open' },
    INVITE_CODES: { type: 'string' },
    APP_VERSION_FLOORS: { type: 'string' },
    PLATFORM_ADMIN_EMAILS: { type: 'string' },
    AI_TURNS_PER_MONTH: { type: 'integer', minimum: 0, maximum: 1_000_000, default: 30 },
    WELCOME_CREDITS: { type: 'integer', minimum: 0, maximum: 1_000_000, default: 20 },
    PUSH_DEFAULT_PROVIDER: { type: 'string', default: 'fcm' },
    FCM_PROJECT_ID: { type: 'string' },
    FCM_CREDENTIALS: { type: 'string' },
    FCM_URL: { type: 'string', format: 'http-url', default: 'https://fcm.googleapis.com' },
    FCM_TOKEN_URL: { type: 'string', format: 'http-url', default: 'https://oauth2.googleapis.com/token' },
    APNS_KEY_ID: { type: 'string' },
    APNS_TEAM_ID: { type: 'string' },
    APNS_KEY: { type: 'string' },
    APNS_TOPIC: { type: 'string' },
    APNS_URL: { type: 'string', format: 'http-url', default: 'https://api.push.apple.com' },
    INTERNAL_API_TOKENS: { type: 'string' },
    GOOGLE_CLIENT_ID: { type: 'string' },
    GOOGLE_CLIENT_SECRET: { type: 'string' },
    GOOGLE_AUTHORIZATION_URL: { type: 'string', format: 'http-url', default: 'https://accounts.google.com/o/oauth2/v2/auth' },
    GOOGLE_TOKEN_URL: { type: 'string', format: 'http-url', default: 'https://oauth2.googleapis.com/token' },
    GOOGLE_USERINFO_URL: { type: 'string', format: 'http-url', default: 'https://openidconnect.googleapis.com/v1/userinfo' },
    APPLE_CLIENT_ID: { type: 'string' },
    APPLE_TEAM_ID: { type: 'string' },
    APPLE_KEY_ID: { type: 'string' },
    APPLE_PRIVATE_KEY: { type: 'string' },
    APPLE_AUTHORIZATION_URL: { type: 'string', format: 'http-url', default: 'https://appleid.apple.com/auth/authorize' },
    APPLE_TOKEN_URL: { type: 'string', format: 'http-url', default: 'https://appleid.apple.com/auth/token' },
    APPLE_KEYS_URL: { type: 'string', format: 'http-url', default: 'https://appleid.apple.com/auth/keys' },
    APPLE_ISSUER: { type: 'string', default: 'https://appleid.apple.com' },
    APPLE_NATIVE_AUDIENCES: { type: 'string' },
    APP_REDIRECT_URIS: { type: 'string' },
    INSTANCE_ID: { type: 'string' },
    LOG_FORMAT: { type: 'string', enum: ['json', 'pretty'] },
    METRICS_PORT: { type: 'integer', minimum: 1, maximum: 65535 },
    SHUTDOWN_DRAIN_SECONDS: { type: 'integer', minimum: 0, maximum: 300, default: 10 },
    SHUTDOWN_TIMEOUT_SECONDS: { type: 'integer', minimum: 1, maximum: 600, default: 20 },
    DB_STATEMENT_TIMEOUT_MS: { type: 'integer', minimum: 0, maximum: 600_000, default: 1000 },
    DB_UNANSWERED_MS: { type: 'integer', minimum: 0, maximum: 60_000, default: 1200 },
    DB_TRANSACTION_POOLING: { type: 'boolean', default: false },
    PASSWORD_HASH_WORKERS: { type: 'integer', minimum: 1, maximum: 64 },
    HEAP_GROWING_PERCENT: { type: 'integer', minimum: 0, maximum: 1000 },
    HELPER_THREAD_NICE: { type: 'integer', minimum: 0, maximum: 19 },
    THREADPOOL_IDLE: { type: 'boolean', default: true },
    RULE_PARSER_URL: { type: 'string', format: 'http-url' },
    RULE_PARSER_MODEL: { type: 'string', default: 'llama3.1' },
    RULE_PARSER_API_KEY: { type: 'string' },
    RULE_PARSER_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 60_000, default: 2000 },
    PLANNER_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 80_000, default: 20_000 },
    PLANNER_THREADS: { type: 'integer', minimum: 1, maximum: 16 },
  },
  // A provider set by halves would silently turn a sign-in method (or push) off: refused instead.
  dependencies: {
    GOOGLE_CLIENT_ID: ['GOOGLE_CLIENT_SECRET'],
    GOOGLE_CLIENT_SECRET: ['GOOGLE_CLIENT_ID'],
    APPLE_CLIENT_ID: ['APPLE_TEAM_ID', 'APPLE_KEY_ID', 'APPLE_PRIVATE_KEY'],
    APPLE_TEAM_ID: ['APPLE_CLIENT_ID', 'APPLE_KEY_ID', 'APPLE_PRIVATE_KEY'],
    APPLE_KEY_ID: ['APPLE_CLIENT_ID', 'APPLE_TEAM_ID', 'APPLE_PRIVATE_KEY'],
    APPLE_PRIVATE_KEY: ['APPLE_CLIENT_ID', 'APPLE_TEAM_ID', 'APPLE_KEY_ID'],
    FCM_PROJECT_ID: ['FCM_CREDENTIALS'],
    FCM_CREDENTIALS: ['FCM_PROJECT_ID'],
    APNS_KEY_ID: ['APNS_TEAM_ID', 'APNS_KEY', 'APNS_TOPIC'],
    APNS_TEAM_ID: ['APNS_KEY_ID', 'APNS_KEY', 'APNS_TOPIC'],
    APNS_KEY: ['APNS_KEY_ID', 'APNS_TEAM_ID', 'APNS_TOPIC'],
    APNS_TOPIC: ['APNS_KEY_ID', 'APNS_TEAM_ID', 'APNS_KEY'],
  },
  // Production: a real database (the image has no embedded PostgreSQL) and a session secret of its own.
  if: { properties: { NODE_ENV: { const: 'production' } }, required: ['NODE_ENV'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited
  then: { required: ['DATABASE_URL', 'SESSION_SECRET'] },
} as const satisfies TypedSchema;

/** The environment as the schema reads it. */
export type Env = Infer<typeof EnvSchema>;

/** A configuration value that cannot be used; start-up prints `message` (`VARIABLE: why`) as its one line. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
  }
}

const PROPERTIES: Record<
  string,
  { type: string; minimum?: number; maximum?: number; format?: string; enum?: readonly string[]; minLength?: number; description?: string }
> = EnvSchema.properties;

/** Variables read in lower case (INTAKE_MODE=Invite; a host name). */
const LOWER_CASE = new Set(['INTAKE_MODE', 'WEBAUTHN_RP_ID']);

/** What a boolean variable may say (any case): ajv's coercion knows only `true` and `false`. */
const BOOLEAN_WORDS: Record<string, boolean> = { '1': true, true: true, yes: true, on: true, '0': false, false: false, no: false, off: false };

function urlOf(protocols: string[]) {
  return (value: string): boolean => {
    try {
      return protocols.includes(new URL(value).protocol);
    } catch {
      return false;
    }
  };
}

/** The formats' checks, and what each asks for (in an error). */
const FORMATS: Record<string, { validate: (value: string) => boolean; wants: string }> = {
  'http-url': { validate: urlOf(['http:', 'https:']), wants: 'an absolute http: or https: URL' },
  'http-url-or-off': { validate: (v) => v.toLowerCase() === 'off' || urlOf(['http:', 'https:'])(v), wants: 'an absolute http: or https: URL, or off' },
  'postgres-url': { validate: urlOf(['postgres:', 'postgresql:']), wants: 'a postgres: or postgresql: URL' },
  'redis-url': { validate: urlOf(['redis:', 'rediss:']), wants: 'a redis: or rediss: URL' },
  'smtp-url': { validate: urlOf(['smtp:', 'smtps:']), wants: 'a smtp: or smtps: URL' },
};

// strictRequired off: `then` requires variables the top-level `properties` declare.
const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: false, strict: true, strictRequired: false });
for (const [name, f] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate: f.validate });
const validate = ajv.compile<Env>(EnvSchema);

/** One line for the first thing the schema refused: the variable and what it must be. */
function refusal(error: ErrorObject, given: Record<string, string>): ConfigError {
  if (error.keyword === 'required' || error.keyword === 'dependencies') {
    const missing = String(error.params.missingProperty);
    if (error.keyword === 'required') return new ConfigError(missing, 'is required when NODE_ENV=production');
    const group = [String(error.params.property), ...String(error.params.deps).split(', ')].sort();
    return new ConfigError(missing, `is needed with ${error.params.property} (${group.join(', ')} go together)`);
  }
  const variable = error.instancePath.replace(/^\//, '');
  const p = PROPERTIES[variable] ?? { type: 'string' };
  const raw = given[variable];
  const range = `from ${p.minimum} to ${p.maximum}`;
  switch (error.keyword) {
    case 'type':
      return new ConfigError(
        variable,
        p.type === 'integer'
          ? `must be a whole number ${range}, got "${raw}"`
          : p.type === 'boolean'
            ? `must be true or false, got "${raw}"`
            : `must be a ${p.type}`,
      );
    case 'minimum':
    case 'maximum':
      return new ConfigError(variable, `must be ${range}, got ${raw}`);
    case 'format':
      return new ConfigError(variable, `must be ${FORMATS[p.format!]?.wants ?? p.format}, got "${raw}"`);
    case 'enum':
      return new ConfigError(variable, `must be one of ${p.enum!.join(', ')}, got "${raw}"`);
    case 'minLength':
      return new ConfigError(variable, `must be at least ${p.minLength} characters`);
    case 'pattern':
      return new ConfigError(variable, `must be ${p.description ?? `like ${error.params.pattern}`}, got "${raw}"`);
    default:
      return new ConfigError(variable || 'environment', error.message ?? 'is not valid');
  }
}

/**
 * The environment read by the schema: every variable it names, trimmed (a blank one counts as
 * unset), coerced to its type, defaults filled in. Throws ConfigError naming the first variable it
 * refuses. Variables it does not name are left out.
 */
export function parseEnv(env: Record<string, string | undefined>): Env {
  const given: Record<string, string> = {};
  const data: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(PROPERTIES)) {
    const value = env[name]?.trim();
    if (value === undefined || value === '') continue;
    given[name] = value;
    data[name] = p.type === 'boolean' ? (BOOLEAN_WORDS[value.toLowerCase()] ?? value) : LOWER_CASE.has(name) ? value.toLowerCase() : value;
  }
  if (!validate(data)) throw refusal(validate.errors![0]!, given);
  return data as Env;
}
