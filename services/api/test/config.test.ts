import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../src/config.js';
import { availableCpus } from '../src/cpus.js';
import { EnvSchema } from '../src/env.js';

describe('configuration', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-config-'));
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const base = { DATA_DIR: dataDir };

  it('has the decided defaults', () => {
    const c = loadConfig(base);
    expect(c).to.include({
      port: 8080,
      host: '0.0.0.0',
      publicBaseUrl: 'http://localhost:8080',
      cookieSecure: false,
      mailFrom: 'Meal Planner <no-reply@localhost>',
      authRateLimit: 100,
      authRateWindowSeconds: 60,
      lockoutMaxFailures: 5,
      lockoutSeconds: 300,
      passwordBreachApi: 'https://api.pwnedpasswords.com',
      intakeMode: 'open',
      aiTurnsPerMonth: 30,
      welcomeCredits: 20,
      pushDefaultProvider: 'fcm',
    });
    expect(c.databaseUrl).to.equal(undefined);
    expect(c.redisUrl).to.equal(undefined);
    expect(c.smtpUrl).to.equal(undefined);
    expect(c.trustProxy).to.equal(undefined);
    expect(c.google).to.equal(undefined);
    expect(c.apple.web).to.equal(undefined);
    expect(c.apple.nativeAudiences).to.deep.equal([]);
    expect(c.appVersionFloors).to.deep.equal({});
    expect(c.inviteCodes).to.deep.equal([]);
  });

  it('takes the WebAuthn RP ID from PUBLIC_BASE_URL (no port) unless WEBAUTHN_RP_ID says, and adds WEBAUTHN_ORIGINS to its origin', () => {
    expect(loadConfig({ ...base, PUBLIC_BASE_URL: 'https://meals.example:8443' }).webauthn).to.deep.equal({
      rpId: 'meals.example',
      origins: ['https://meals.example:8443'],
    });
    const set = loadConfig({
      ...base,
      PUBLIC_BASE_URL: 'https://app.meals.example',
      WEBAUTHN_RP_ID: 'meals.example',
      WEBAUTHN_ORIGINS: 'https://meals.example, android:apk-key-hash:abc123',
    });
    expect(set.webauthn).to.deep.equal({
      rpId: 'meals.example',
      origins: ['https://app.meals.example', 'https://meals.example', 'android:apk-key-hash:abc123'],
    });
    expect(() => loadConfig({ ...base, WEBAUTHN_RP_ID: 'https://meals.example' })).to.throw(/WEBAUTHN_RP_ID/);
    expect(() => loadConfig({ ...base, WEBAUTHN_ORIGINS: 'not an origin' })).to.throw(/WEBAUTHN_ORIGINS/);
  });

  it('follows PORT into PUBLIC_BASE_URL and https into COOKIE_SECURE', () => {
    expect(loadConfig({ ...base, PORT: '9000' }).publicBaseUrl).to.equal('http://localhost:9000');
    // A specific HOST is kept, so the ready line's URL is the origin the CSRF check accepts.
    expect(loadConfig({ ...base, PORT: '9000', HOST: '127.0.0.1' }).publicBaseUrl).to.equal('http://127.0.0.1:9000');
    expect(loadConfig({ ...base, PORT: '9000', HOST: '::1' }).publicBaseUrl).to.equal('http://[::1]:9000');
    expect(loadConfig({ ...base, PORT: '9000', HOST: '0.0.0.0' }).publicBaseUrl).to.equal('http://localhost:9000');
    expect(loadConfig({ ...base, PUBLIC_BASE_URL: 'https://meals.example/' })).to.include({ publicBaseUrl: 'https://meals.example', cookieSecure: true });
    expect(loadConfig({ ...base, PUBLIC_BASE_URL: 'https://meals.example', COOKIE_SECURE: 'false' }).cookieSecure).to.equal(false);
  });

  it('reads WEB_CLIENT_URL (unset: /login is a page of the service)', () => {
    expect(loadConfig(base).webClientUrl).to.equal(undefined);
    expect(loadConfig({ ...base, WEB_CLIENT_URL: 'https://app.example/sign-in/' }).webClientUrl).to.equal('https://app.example/sign-in');
  });

  it('makes a development session secret once and keeps it in DATA_DIR', () => {
    const a = loadConfig(base).sessionSecret;
    expect(a.length).to.be.greaterThan(32);
    expect(loadConfig(base).sessionSecret).to.equal(a);
    expect(fs.readFileSync(path.join(dataDir, 'session-secret'), 'utf8')).to.equal(a);
  });

  it('push: no provider and no internal tokens by default; FCM and APNs read their files; a half-configured provider is refused', () => {
    const none = loadConfig(base);
    expect([none.fcm, none.apns, none.internalApiTokens]).to.deep.equal([undefined, undefined, []]);
    const sa = path.join(dataDir, 'sa.json');
    fs.writeFileSync(
      sa,
      JSON.stringify({ client_email: 'push@p.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n' }),
    );
    const p8 = path.join(dataDir, 'key.p8');
    fs.writeFileSync(p8, '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n');
    const c = loadConfig({
      ...base,
      FCM_PROJECT_ID: 'p',
      FCM_CREDENTIALS: sa,
      APNS_KEY_ID: 'K',
      APNS_TEAM_ID: 'T',
      APNS_KEY: p8,
      APNS_TOPIC: 'no.example.app',
      INTERNAL_API_TOKENS: ' a , b ',
    });
    expect(c.fcm).to.deep.include({ projectId: 'p', url: 'https://fcm.googleapis.com', tokenUrl: 'https://oauth2.googleapis.com/token' });
    expect(c.fcm!.credentials.client_email).to.equal('push@p.iam.gserviceaccount.com');
    expect(c.apns).to.deep.include({ keyId: 'K', teamId: 'T', topic: 'no.example.app', url: 'https://api.push.apple.com' });
    expect(c.internalApiTokens).to.deep.equal(['a', 'b']);
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig({ ...base, ...env });
      } catch (err) {
        return (err as ConfigError).variable;
      }
      return undefined;
    };
    expect(refused({ FCM_PROJECT_ID: 'p' })).to.equal('FCM_CREDENTIALS');
    expect(refused({ FCM_PROJECT_ID: 'p', FCM_CREDENTIALS: path.join(dataDir, 'missing.json') })).to.equal('FCM_CREDENTIALS');
    expect(refused({ FCM_PROJECT_ID: 'p', FCM_CREDENTIALS: p8 })).to.equal('FCM_CREDENTIALS');
    expect(refused({ APNS_KEY_ID: 'K', APNS_TEAM_ID: 'T', APNS_KEY: p8 })).to.equal('APNS_TOPIC');
    const notKey = path.join(dataDir, 'not-a-key.txt');
    fs.writeFileSync(notKey, 'hello');
    expect(refused({ APNS_KEY_ID: 'K', APNS_TEAM_ID: 'T', APNS_KEY: notKey, APNS_TOPIC: 't' })).to.equal('APNS_KEY');
  });

  it('parses lists, floors, trust proxy and the breach switch', () => {
    const c = loadConfig({
      ...base,
      INVITE_CODES: 'a, b,,c',
      PLATFORM_ADMIN_EMAILS: 'Ops@Example.com',
      APP_VERSION_FLOORS: 'ios=2.4.0,android=2.3.1',
      TRUST_PROXY: '1',
      PASSWORD_BREACH_API: 'off',
      APPLE_NATIVE_AUDIENCES: 'com.example.app',
      CORS_ORIGINS: 'https://app.example.com, http://localhost:5173,https://app.example.com',
    });
    expect(c.corsOrigins).to.deep.equal(['https://app.example.com', 'http://localhost:5173']);
    expect(loadConfig(base).corsOrigins, 'empty by default: same-origin only').to.deep.equal([]);
    expect(loadConfig(base).dbUnansweredMs).to.equal(1200);
    expect(loadConfig(base).dbStatementTimeoutMs).to.equal(1000);
    expect(loadConfig({ ...base, DB_UNANSWERED_MS: '0' }).dbUnansweredMs).to.equal(0);
    expect(c.inviteCodes).to.deep.equal(['a', 'b', 'c']);
    expect(c.platformAdminEmails).to.deep.equal(['ops@example.com']);
    expect(c.appVersionFloors).to.deep.equal({ ios: '2.4.0', android: '2.3.1' });
    expect(c.trustProxy).to.equal(1);
    expect(c.passwordBreachApi).to.equal(undefined);
    expect(c.apple.nativeAudiences).to.deep.equal(['com.example.app']);
  });

  it('reads the session lifetime and the unasked-mail limits (defaults 90 days, 5 per address, 100 distinct addresses per IP)', () => {
    const d = loadConfig(base);
    expect([d.sessionMaxAgeDays, d.unaskedMailPerAddress, d.unaskedMailPerIp]).to.deep.equal([90, 5, 100]);
    const c = loadConfig({ ...base, SESSION_MAX_AGE_DAYS: '30', UNASKED_MAIL_PER_ADDRESS: '3', UNASKED_MAIL_PER_IP: '500' });
    expect([c.sessionMaxAgeDays, c.unaskedMailPerAddress, c.unaskedMailPerIp]).to.deep.equal([30, 3, 500]);
  });

  it('reads booleans in any of their words and case, and the words of INTAKE_MODE in any case; a blank variable is unset', () => {
    const c = loadConfig({
      ...base,
      COOKIE_SECURE: 'YES',
      WEB_PAGES: 'off',
      THREADPOOL_IDLE: '0',
      DB_TRANSACTION_POOLING: 'On',
      INTAKE_MODE: 'Invite',
      PORT: '  ',
    });
    expect([c.cookieSecure, c.webPages, c.threadpoolIdle, c.dbTransactionPooling, c.intakeMode, c.port]).to.deep.equal([
      true,
      false,
      false,
      true,
      'invite',
      8080,
    ]);
  });

  it('names the variable and what it must be, in one line', () => {
    const message = (env: Record<string, string>) => {
      try {
        loadConfig({ ...base, ...env });
      } catch (err) {
        return (err as Error).message;
      }
      return undefined;
    };
    expect(message({ PORT: 'eighty' })).to.equal('PORT: must be a whole number from 0 to 65535, got "eighty"');
    expect(message({ LOCKOUT_SECONDS: '0' })).to.equal('LOCKOUT_SECONDS: must be from 1 to 604800, got 0');
    expect(message({ COOKIE_SECURE: 'maybe' })).to.equal('COOKIE_SECURE: must be true or false, got "maybe"');
    expect(message({ REDIS_URL: 'http://x' })).to.equal('REDIS_URL: must be a redis: or rediss: URL, got "http://x"');
    expect(message({ INTAKE_MODE: 'closed' })).to.equal('INTAKE_MODE: must be one of open, invite, paused, got "closed"');
    expect(message({ NODE_ENV: 'production', SESSION_SECRET: 'x'.repeat(40) })).to.equal('DATABASE_URL: is required when NODE_ENV=production');
    expect(message({ FCM_CREDENTIALS: '/x.json' })).to.match(/^FCM_PROJECT_ID: is needed with FCM_CREDENTIALS/);
  });

  it('docs/configuration.md lists every variable of the schema with its default, and no variable the service does not read', () => {
    const doc = fs.readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    // Table rows: | `A` / `B` | default | meaning |
    const rows = doc.split('\n').filter((l) => l.startsWith('| `'));
    const documented = new Map<string, string>();
    for (const row of rows) {
      const [, names = '', defaults = ''] = row.split('|');
      for (const [, name] of names.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) documented.set(name!, defaults);
    }
    const properties = EnvSchema.properties as Record<string, { default?: unknown }>;
    // Read outside config.ts (the logger, the runtime flags, OpenTelemetry's own variables).
    const elsewhere = ['LOG_LEVEL', 'MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'OTEL_EXPORTER_OTLP_ENDPOINT'];
    expect(
      Object.keys(properties).filter((name) => !documented.has(name)),
      'variables of the schema missing in docs/configuration.md',
    ).to.deep.equal([]);
    for (const name of documented.keys()) expect([...Object.keys(properties), ...elsewhere], `${name}: read by the service`).to.include(name);
    for (const [name, p] of Object.entries(properties)) {
      if (p.default === undefined) continue;
      const cell = documented.get(name)!;
      // An endpoint's default is the provider's own (the row says whose).
      if (typeof p.default === 'string' && p.default.startsWith('https://') && /own/.test(cell)) continue;
      const words = p.default === true ? ['true', 'on'] : p.default === false ? ['false', 'off'] : [String(p.default)];
      expect(
        words.some((w) => cell.includes(`\`${w}\``)),
        `${name}: default ${String(p.default)} in its row`,
      ).to.equal(true);
    }
  });

  const bad: [Record<string, string>, string][] = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ PUBLIC_BASE_URL: 'not a url' }, 'PUBLIC_BASE_URL'],
    [{ COOKIE_SECURE: 'maybe' }, 'COOKIE_SECURE'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ SMTP_URL: 'mail.example' }, 'SMTP_URL'],
    [{ AUTH_RATE_LIMIT: '0' }, 'AUTH_RATE_LIMIT'],
    [{ AUTH_RATE_WINDOW_SECONDS: '-1' }, 'AUTH_RATE_WINDOW_SECONDS'],
    [{ LOCKOUT_MAX_FAILURES: 'x' }, 'LOCKOUT_MAX_FAILURES'],
    [{ LOCKOUT_SECONDS: '1.5' }, 'LOCKOUT_SECONDS'],
    [{ PASSWORD_BREACH_API: 'ftp://x' }, 'PASSWORD_BREACH_API'],
    [{ INTAKE_MODE: 'closed' }, 'INTAKE_MODE'],
    [{ APP_VERSION_FLOORS: 'ios>2' }, 'APP_VERSION_FLOORS'],
    [{ AI_TURNS_PER_MONTH: 'lots' }, 'AI_TURNS_PER_MONTH'],
    [{ WELCOME_CREDITS: '-5' }, 'WELCOME_CREDITS'],
    [{ GOOGLE_CLIENT_ID: 'id' }, 'GOOGLE_CLIENT_SECRET'],
    [{ APPLE_CLIENT_ID: 'id' }, 'APPLE_TEAM_ID'],
    [{ APP_REDIRECT_URIS: 'not a uri' }, 'APP_REDIRECT_URIS'],
    [{ CORS_ORIGINS: '*' }, 'CORS_ORIGINS'],
    [{ DB_UNANSWERED_MS: 'soon' }, 'DB_UNANSWERED_MS'],
    [{ CORS_ORIGINS: 'https://app.example.com/' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'https://app.example.com/web' }, 'CORS_ORIGINS'],
    [{ PLATFORM_ADMIN_EMAILS: 'ops@example.com,<root@example.com>' }, 'PLATFORM_ADMIN_EMAILS'],
    [{ PLATFORM_ADMIN_EMAILS: 'mailto:ops@example.com' }, 'PLATFORM_ADMIN_EMAILS'],
    [{ SESSION_MAX_AGE_DAYS: '0' }, 'SESSION_MAX_AGE_DAYS'],
    [{ UNASKED_MAIL_PER_ADDRESS: 'five' }, 'UNASKED_MAIL_PER_ADDRESS'],
    [{ UNASKED_MAIL_PER_IP: '0' }, 'UNASKED_MAIL_PER_IP'],
    [{ WEB_CLIENT_URL: 'app.example' }, 'WEB_CLIENT_URL'],
    [{ WEB_CLIENT_URL: 'javascript:alert(1)' }, 'WEB_CLIENT_URL'],
    [{ SESSION_SECRET: 'short' }, 'SESSION_SECRET'],
    [{ NODE_ENV: 'production', DATABASE_URL: 'postgres://db.internal/meals' }, 'SESSION_SECRET'],
    [{ NODE_ENV: 'production', SESSION_SECRET: 'x'.repeat(40) }, 'DATABASE_URL'],
  ];
  for (const [env, variable] of bad) {
    it(`refuses ${JSON.stringify(env)}, naming ${variable}`, () => {
      let err: unknown;
      try {
        loadConfig({ ...base, ...env });
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).variable).to.equal(variable);
      expect((err as Error).message.startsWith(`${variable}:`)).to.equal(true);
      expect((err as Error).message).to.not.contain('\n');
    });
  }
});

describe('CPUs for the password-hashing threads', () => {
  const files = (map: Record<string, string>) => (file: string) => map[file];

  it('takes the container limit from cgroup v2 cpu.max, rounded up, never above the cores', () => {
    expect(availableCpus(files({ '/sys/fs/cgroup/cpu.max': '100000 100000\n' }), 16)).to.equal(1);
    expect(availableCpus(files({ '/sys/fs/cgroup/cpu.max': '150000 100000\n' }), 16)).to.equal(2);
    expect(availableCpus(files({ '/sys/fs/cgroup/cpu.max': '25000 100000\n' }), 16)).to.equal(1);
    expect(availableCpus(files({ '/sys/fs/cgroup/cpu.max': '800000 100000\n' }), 2)).to.equal(2);
  });

  it('reads cgroup v1 CFS quota when there is no v2 file, and the cores when there is no limit', () => {
    expect(availableCpus(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '300000', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000' }), 16)).to.equal(3);
    expect(availableCpus(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000' }), 6)).to.equal(6);
    expect(availableCpus(files({ '/sys/fs/cgroup/cpu.max': 'max 100000\n' }), 8)).to.equal(8);
    expect(availableCpus(files({}), 4)).to.equal(4);
  });

  it('PASSWORD_HASH_WORKERS overrides; the default leaves one CPU to the event loop and is at most 4', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-config-'));
    try {
      expect(loadConfig({ DATA_DIR: dir, PASSWORD_HASH_WORKERS: '2' }).passwordHashWorkers).to.equal(2);
      expect(loadConfig({ DATA_DIR: dir }).passwordHashWorkers).to.equal(Math.min(4, Math.max(1, availableCpus() - 1)));
      expect(() => loadConfig({ DATA_DIR: dir, PASSWORD_HASH_WORKERS: '0' })).to.throw(ConfigError);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
