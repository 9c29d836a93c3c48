import { AsyncResource } from 'node:async_hooks';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '@svc/contracts';
import type { Logger } from '@svc/http-kit';
import type { Knex } from 'knex';
import nodemailer, { type Transporter } from 'nodemailer';
import type { MailContent } from './mail-templates.js';
import type { OutboxMail } from './store.js';

/** How often a started worker looks for due mail, besides the nudge after each enqueue. */
const POLL_MS = 5_000;
/** First retry after 30 s, doubling up to an hour; after 12 attempts (about 7.5 h of outage) it gives up. */
export const MAIL_RETRY = { firstDelayMs: 30_000, maxDelayMs: 3_600_000, maxAttempts: 12 };
/**
 * A claimed row is not offered again for this long: the SMTP exchange (at most ~50 s with the
 * transport's timeouts) and the write-back must fit in it. A worker that dies after claiming leaves
 * the row to be retried once the lease has run out (at-least-once; the retry carries the same
 * Message-ID, so a receiver can recognise the duplicate).
 */
export const MAIL_CLAIM_LEASE_MS = 10 * 60_000;

export interface MailerOptions {
  knex: Knex;
  clock: Clock;
  logger: Logger;
  from: string;
  /** A transport to use as is (tests). */
  transport?: Transporter;
  /** nodemailer SMTP URL; without it (and without `transport`) mail is written to `.eml` files. */
  smtpUrl?: string;
  /** `.eml` files go to `${dataDir}/mail`. */
  dataDir: string;
}

interface OutboxRow {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  textBody: string;
  htmlBody: string;
  attempts: number;
}

export function retryDelayMs(attempts: number): number {
  return Math.min(MAIL_RETRY.maxDelayMs, MAIL_RETRY.firstDelayMs * 2 ** Math.max(0, attempts - 1));
}

/** The outbox row of a mail (written by the store in the caller's transaction). */
export function outboxRow(mail: MailContent): OutboxMail {
  return { kind: mail.kind, recipient: mail.to, subject: mail.subject, textBody: mail.text, htmlBody: mail.html };
}

/** The Message-ID of an outbox row: the same on every attempt, so a receiver can recognise a retry. */
export function messageIdOf(rowId: string): string {
  return `<${rowId}@meal-planner>`;
}

/**
 * The mail outbox. Mail is written in the caller's transaction (`enqueue`, or the store's
 * `writeMail`), so a mail exists exactly when the change that caused it committed, and nothing is
 * sent inside a request. The worker delivers due mail one row at a time, and never talks SMTP while
 * it holds a database transaction or a row lock:
 * 1. claim: one statement (its own short transaction) picks a due row with `FOR UPDATE SKIP LOCKED`,
 *    counts the attempt and moves the row's next attempt a lease ahead, so no other worker on any
 *    instance takes it meanwhile;
 * 2. send, with no transaction open;
 * 3. record the outcome: sent (bodies emptied), or the error and the next attempt (exponential
 *    backoff). An SMTP outage delays mail but does not lose it; a crash between 1 and 3 leaves the
 *    row to be retried after the lease (at-least-once, same Message-ID).
 */
export class Mailer {
  private readonly transport: Transporter;
  private readonly fileDir: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private again = false;
  // Background delivery runs outside any request's context, so its queries never count toward a
  // request's Server-Timing. The resource is made here, when no request is current.
  private readonly background = new AsyncResource('mail-outbox');

  constructor(private readonly options: MailerOptions) {
    if (options.transport) {
      this.transport = options.transport;
    } else if (options.smtpUrl) {
      this.transport = nodemailer.createTransport({ url: options.smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
    } else {
      this.transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
      this.fileDir = path.join(options.dataDir, 'mail');
    }
  }

  /** Writes a mail into the outbox inside `trx`; it goes out once `trx` commits. */
  async enqueue(trx: Knex.Transaction, mail: MailContent): Promise<void> {
    const now = this.options.clock.now();
    await trx('mail_outbox').insert({ ...outboxRow(mail), createdAt: now, nextAttemptAt: now });
  }

  /** After a commit that enqueued mail: deliver soon, when the worker runs. */
  nudge(): void {
    if (!this.timer) return;
    this.background.runInAsyncScope(() => setImmediate(() => void this.deliverInBackground()));
  }

  start(): void {
    if (this.timer) return;
    this.timer = this.background.runInAsyncScope(() => setInterval(() => void this.deliverInBackground(), POLL_MS));
    this.timer.unref();
    this.nudge();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => 0);
  }

  private async deliverInBackground(): Promise<void> {
    try {
      await this.deliverDue();
    } catch (err) {
      this.options.logger.error({ err }, 'mail outbox: delivery round failed');
    }
  }

  /**
   * Delivers every mail that is due now; answers how many went out. Calls that overlap in one
   * process share a round (and run one more when asked during it).
   */
  deliverDue(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const round = async (): Promise<number> => {
      let sent = 0;
      do {
        this.again = false;
        for (;;) {
          const outcome = await this.deliverOne();
          if (outcome === 'none') break;
          if (outcome === 'sent') sent += 1;
        }
      } while (this.again);
      return sent;
    };
    this.running = round().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async deliverOne(): Promise<'none' | 'sent' | 'failed'> {
    const { knex, clock, logger } = this.options;
    const now = clock.now();
    const claimed = await knex.raw(
      `update mail_outbox set attempts = attempts + 1, next_attempt_at = ?
        where id = (select id from mail_outbox
                     where sent_at is null and gave_up_at is null and next_attempt_at <= ?
                     order by next_attempt_at limit 1 for update skip locked)
        returning id, kind, recipient, subject, text_body, html_body, attempts`,
      [new Date(now.getTime() + MAIL_CLAIM_LEASE_MS), now],
    );
    const raw = claimed.rows[0] as
      | { id: string; kind: string; recipient: string; subject: string; text_body: string; html_body: string; attempts: number }
      | undefined;
    if (!raw) return 'none';
    const row: OutboxRow = {
      id: raw.id,
      kind: raw.kind,
      recipient: raw.recipient,
      subject: raw.subject,
      textBody: raw.text_body,
      htmlBody: raw.html_body,
      attempts: raw.attempts,
    };
    const attempts = row.attempts;
    try {
      await this.send(row);
    } catch (err) {
      const message = (err as Error).message ?? String(err);
      const gaveUp = attempts >= MAIL_RETRY.maxAttempts;
      await knex('mail_outbox')
        .where({ id: row.id })
        .update({
          lastError: message.slice(0, 1000),
          nextAttemptAt: new Date(clock.now().getTime() + retryDelayMs(attempts)),
          gaveUpAt: gaveUp ? clock.now() : null,
        });
      if (gaveUp) logger.error({ mailId: row.id, kind: row.kind, attempts, err: { message } }, 'mail outbox: gave up delivering a mail');
      else
        logger.warn(
          { mailId: row.id, kind: row.kind, attempts, retryInMs: retryDelayMs(attempts), err: { message } },
          'mail outbox: delivery failed; will retry',
        );
      return 'failed';
    }
    // The bodies hold live tokens: once delivered they need not stay at rest. The notice of an
    // account's deletion forgets its address too: nothing of the person stays.
    const forget = row.kind === 'account_deleted' ? { recipient: '' } : {};
    await knex('mail_outbox')
      .where({ id: row.id })
      .update({ sentAt: clock.now(), textBody: '', htmlBody: '', lastError: null, ...forget });
    return 'sent';
  }

  private async send(row: OutboxRow): Promise<void> {
    const info = await this.transport.sendMail({
      from: this.options.from,
      to: row.recipient,
      subject: row.subject,
      text: row.textBody,
      html: row.htmlBody,
      messageId: messageIdOf(row.id),
    });
    if (this.fileDir) {
      await fs.mkdir(this.fileDir, { recursive: true });
      const file = path.join(this.fileDir, `${this.options.clock.now().toISOString().replace(/[:.]/g, '-')}-${row.id}.eml`);
      await fs.writeFile(file, (info as unknown as { message: Buffer }).message, { mode: 0o600 });
      // The .eml is quoted-printable, whose soft line breaks split a long link; the plain text
      // beside it holds each link whole on a line of its own, ready to copy.
      const text = file.replace(/\.eml$/, '.txt');
      await fs.writeFile(text, `To: ${row.recipient}\nSubject: ${row.subject}\n\n${row.textBody}`, { mode: 0o600 });
      this.options.logger.info({ mailId: row.id, kind: row.kind, to: row.recipient, subject: row.subject, file, text }, 'mail written to file');
    } else {
      this.options.logger.info({ mailId: row.id, kind: row.kind, to: row.recipient }, 'mail sent');
    }
  }

  close(): void {
    this.transport.close();
  }
}
