import type { AddressInfo } from 'node:net';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

/**
 * A real SMTP server on loopback that keeps what it receives. `failNext(n)` makes the next n
 * transactions fail with a 4xx, as an outage would; stop()/start() take it away entirely.
 */
export class SmtpReceiver {
  readonly mails: ReceivedMail[] = [];
  private server: SMTPServer | undefined;
  private waiters: { predicate: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }[] = [];
  private failures = 0;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', async () => {
          if (this.failures > 0) {
            this.failures -= 1;
            const err = new Error('Temporary failure') as Error & { responseCode: number };
            err.responseCode = 451;
            callback(err);
            return;
          }
          const parsed = await PostalMime.parse(Buffer.concat(chunks));
          const mail: ReceivedMail = {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: parsed.html ?? '',
            headers: Object.fromEntries(parsed.headers.map((h) => [h.key, h.value])),
          };
          this.mails.push(mail);
          this.waiters = this.waiters.filter((w) => {
            if (!w.predicate(mail)) return true;
            w.resolve(mail);
            return false;
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  failNext(count: number): void {
    this.failures = count;
  }

  /** Resolves with the first mail (already received or still to come) that matches. */
  waitFor(predicate: (m: ReceivedMail) => boolean, timeoutMs = 10_000): Promise<ReceivedMail> {
    const found = this.mails.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no matching mail arrived')), timeoutMs);
      this.waiters.push({
        predicate,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  }

  clear(): void {
    this.mails.length = 0;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }
}

/** Every http(s) link in a mail's text. */
export function linksIn(text: string): URL[] {
  return [...text.matchAll(/https?:\/\/[^\s<>"')]+/g)].map((m) => new URL(m[0]));
}
