import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, ManualClock } from '@svc/http-kit';
import { createTestDatabase, linksIn, SmtpReceiver, type TestDatabase } from '@svc/test-support';
import { expect } from 'chai';
import request from 'supertest';
import { loadConfig } from '../src/config.js';
import { buildService, type Service, type ServiceDeps } from '../src/service.js';
import { deadMailedLinks } from './mailed-links.js';

export interface Harness {
  db: TestDatabase;
  smtp: SmtpReceiver;
  clock: ManualClock;
  service: Service;
  app: Service['app'];
  dataDir: string;
  /**
   * A second instance on the same database, configuration and clock that loads no declared read
   * with the session: every route reads itself (the model path), as the reference the declared
   * reads are held to.
   */
  unlent(): Promise<Service['app']>;
  /** Delivers what the outbox holds now, then returns the mails that arrived for `to`. */
  mailsTo(to: string): Promise<{ subject: string; text: string; html: string }[]>;
  close(): Promise<void>;
}

/** The composed service on a database of its own, mailing to a real SMTP receiver, on a manual clock. */
export async function startHarness(
  env: Record<string, string> = {},
  extra: Pick<ServiceDeps, 'apnsCa' | 'declaredReads' | 'dishCatalog'> = {},
): Promise<Harness> {
  const db = await createTestDatabase();
  const smtp = new SmtpReceiver();
  await smtp.start();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-'));
  const config = loadConfig({ DATA_DIR: dataDir, SMTP_URL: smtp.url, PASSWORD_BREACH_API: 'off', PUBLIC_BASE_URL: 'http://localhost:8080', ...env });
  const clock = new ManualClock('2026-11-22T09:00:00.000Z');
  const service = await buildService({
    config,
    knex: db.knex,
    logger: createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    clock,
    startMailer: false,
    ...extra,
  });
  const others: Service[] = [];
  return {
    db,
    smtp,
    clock,
    service,
    app: service.app,
    dataDir,
    async unlent() {
      const other = await buildService({
        config,
        knex: db.knex,
        logger: createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
        clock,
        startMailer: false,
        declaredReads: false,
      });
      others.push(other);
      return other.app;
    },
    async mailsTo(to) {
      await service.accounts.deliverDueMail();
      return smtp.mails.filter((m) => m.to.some((r) => r.toLowerCase() === to.toLowerCase()));
    },
    async close() {
      for (const other of others) await other.close();
      // Every link of every mail this service sent opens something (2xx or 3xx).
      const dead = config.webPages ? await deadMailedLinks(service.app, config.publicBaseUrl, smtp.mails) : [];
      await service.close();
      await smtp.stop();
      await db.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (dead.length) throw new Error(`mailed links that open nothing:\n${dead.join('\n')}`);
    },
  };
}

/** The link in a mail that goes to `pathname` on the public base URL. */
export function linkTo(mail: { text: string }, pathname: string): URL {
  const link = linksIn(mail.text).find((u) => u.pathname === pathname);
  expect(link, `a ${pathname} link in: ${mail.text}`).to.not.equal(undefined);
  return link!;
}

/** Signs a new account up and returns a cookie-carrying agent. */
export async function signUp(app: Service['app'], email: string, displayName = 'Test Person', password = 'correct horse battery'): Promise<request.Agent> {
  const agent = request.agent(app);
  const res = await agent.post('/api/v1/auth/register').send({ email, password, displayName });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return agent;
}
