import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHttpServer, createLogger } from '@svc/http-kit';
import { createTestDatabase, type ReceivedMail, SmtpReceiver, type TestDatabase } from '@svc/test-support';
import { loadConfig } from '../src/config.js';
import { buildService, type Service } from '../src/service.js';
import { deadMailedLinks } from './mailed-links.js';

/** Test outputs worth keeping (screenshots, the served document, the generated client): gitignored. */
export const ARTIFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'test-artifacts');

export interface LiveServer {
  /** http://127.0.0.1:<port>, which is also PUBLIC_BASE_URL: mailed links point here. */
  url: string;
  db: TestDatabase;
  smtp: SmtpReceiver;
  service: Service;
  /** Waits for the next mail to `to` (the mail worker runs as in production). */
  mailTo(to: string): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/**
 * The composed service listening on a real port, with the real mail worker delivering to a real
 * SMTP receiver and the system clock: what a browser or a generated client talks to.
 */
export async function startLiveServer(env: Record<string, string> = {}, options: { hostName?: string } = {}): Promise<LiveServer> {
  const db = await createTestDatabase();
  const smtp = new SmtpReceiver();
  await smtp.start();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-live-'));
  // The port is known before the service is built, so PUBLIC_BASE_URL can name it.
  let app: Service['app'] | undefined;
  const server = createHttpServer(((req: http.IncomingMessage, res: http.ServerResponse) => app!(req, res)) as unknown as Service['app']);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // `localhost` where a browser needs a host name (WebAuthn refuses an IP address as RP ID).
  const url = `http://${options.hostName ?? '127.0.0.1'}:${(server.address() as AddressInfo).port}`;
  const config = loadConfig({ DATA_DIR: dataDir, SMTP_URL: smtp.url, PASSWORD_BREACH_API: 'off', PUBLIC_BASE_URL: url, HOST: '127.0.0.1', ...env });
  const service = await buildService({ config, knex: db.knex, logger: createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
  app = service.app;
  return {
    url,
    db,
    smtp,
    service,
    mailTo: (to) => smtp.waitFor((m) => m.to.some((r) => r.toLowerCase() === to.toLowerCase())),
    async close() {
      // Every link of every mail this service sent opens something (2xx or 3xx).
      const dead = config.webPages ? await deadMailedLinks(service.app, config.publicBaseUrl, smtp.mails) : [];
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await service.close();
      await smtp.stop();
      await db.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (dead.length) throw new Error(`mailed links that open nothing:\n${dead.join('\n')}`);
    },
  };
}
