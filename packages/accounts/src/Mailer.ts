import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '@svc/contracts';
import type { Logger } from '@svc/http-kit';
import { GiveUp, type JobQueue, RetryLater } from '@svc/jobs';
import type { Knex } from 'knex';
import nodemailer, { type Transporter } from 'nodemailer';
import type { MailContent } from './mail-templates.js';
import { MAIL_EXPIRE_SECONDS, MAIL_QUEUE } from './migrations.js';
import type { OutboxMail } from './store.js';

/** First retry after 30 s, doubling up to an hour; after 12 attempts (about 7.5 h of outage) it gives up. */
export const MAIL_RETRY = { firstDelayMs: 30_000, maxDelayMs: 3_600_000, maxAttempts: 12 };

export interface MailerOptions {
  knex: Knex;
  /** The job queue the outbox's deliveries run on (every instance that starts it delivers mail). */
  jobs: JobQueue;
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
 * sent inside a request. The row's insert makes its delivery job in the same statement (a trigger
 * @svc/jobs installs from this package's `jobSources`), and mail is delivered by the service's one
 * job queue, on every instance that runs it, one job per row:
 * 1. count the attempt and read the row (one short statement; a row already sent, given up or
 *    deleted ends the job);
 * 2. send, with no transaction open;
 * 3. record the outcome: sent (bodies emptied), or the error and the next attempt (30 s doubling to
 *    an hour, handed to the queue as the retry's delay; given up after 12 attempts). An SMTP
 *    outage delays mail but does not lose it; an instance that dies between 1 and 3 leaves the job
 *    active until the queue's expiry puts it back for another instance (at-least-once, the same
 *    Message-ID on every attempt).
 */
export class Mailer {
  private readonly transport: Transporter;
  private readonly fileDir: string | undefined;
  /** Mail this instance sent (so `deliverDue` can answer how many a round sent). */
  private sent = 0;

  constructor(private readonly options: MailerOptions) {
    if (options.transport) {
      this.transport = options.transport;
    } else if (options.smtpUrl) {
      this.transport = nodemailer.createTransport({ url: options.smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
    } else {
      this.transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
      this.fileDir = path.join(options.dataDir, 'mail');
    }
    options.jobs.define<{ id: string }>(MAIL_QUEUE, (job) => this.deliver(job.id), { expireInSeconds: MAIL_EXPIRE_SECONDS });
  }

  /** Writes a mail into the outbox inside `trx`; it goes out once `trx` commits (its job is made by the insert). */
  async enqueue(trx: Knex.Transaction, mail: MailContent): Promise<void> {
    const now = this.options.clock.now();
    await trx('mail_outbox').insert({ ...outboxRow(mail), createdAt: now, nextAttemptAt: now });
  }

  /** After a commit that enqueued mail: this instance's runner looks for due jobs now rather than at its next poll. */
  nudge(): void {
    this.options.jobs.nudge();
  }

  /**
   * Runs the mail jobs that are due now on this instance (tests, tools: a started queue does it by
   * itself); answers how many mails went out.
   */
  async deliverDue(): Promise<number> {
    const before = this.sent;
    await this.options.jobs.runDue(MAIL_QUEUE);
    return this.sent - before;
  }

  /** One delivery job: the outbox row `id`. Throws to have the queue retry (RetryLater) or give it up (GiveUp). */
  private async deliver(id: string): Promise<void> {
    const { knex, clock, logger } = this.options;
    const claimed = await knex.raw(
      `update mail_outbox set attempts = attempts + 1
        where id = ? and sent_at is null and gave_up_at is null
        returning id, kind, recipient, subject, text_body, html_body, attempts`,
      [id],
    );
    const raw = claimed.rows[0] as
      | { id: string; kind: string; recipient: string; subject: string; text_body: string; html_body: string; attempts: number }
      | undefined;
    if (!raw) return; // sent already (a rerun after a crash), given up, or deleted with its account
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
      if (gaveUp) {
        logger.error({ mailId: row.id, kind: row.kind, attempts, err: { message } }, 'mail outbox: gave up delivering a mail');
        throw new GiveUp(`mail not delivered after ${attempts} attempts`);
      }
      logger.warn(
        { mailId: row.id, kind: row.kind, attempts, retryInMs: retryDelayMs(attempts), err: { message } },
        'mail outbox: delivery failed; will retry',
      );
      throw new RetryLater('mail delivery failed', retryDelayMs(attempts));
    }
    // The bodies hold live tokens: once delivered they need not stay at rest. The notice of an
    // account's deletion forgets its address too: nothing of the person stays.
    const forget = row.kind === 'account_deleted' ? { recipient: '' } : {};
    await knex('mail_outbox')
      .where({ id: row.id })
      .update({ sentAt: clock.now(), textBody: '', htmlBody: '', lastError: null, ...forget });
    this.sent += 1;
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
      // A text file ends with a newline (`cat` of it leaves the shell's prompt on a line of its own).
      const body = row.textBody.endsWith('\n') ? row.textBody : `${row.textBody}\n`;
      await fs.writeFile(text, `To: ${row.recipient}\nSubject: ${row.subject}\n\n${body}`, { mode: 0o600 });
      this.options.logger.info({ mailId: row.id, kind: row.kind, to: row.recipient, subject: row.subject, file, text }, 'mail written to file');
    } else {
      this.options.logger.info({ mailId: row.id, kind: row.kind, to: row.recipient }, 'mail sent');
    }
  }

  close(): void {
    this.transport.close();
  }
}
