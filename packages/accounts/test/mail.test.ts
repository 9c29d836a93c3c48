import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import nodemailer from 'nodemailer';
import request from 'supertest';
import { MAIL_RETRY } from '../src/Mailer.js';
import { createWorld, linkIn, mailsTo, register, type World } from './helpers.js';

describe('the mail outbox', () => {
  let w: World;
  /**
   * Time passes for the queue too: the delivery jobs of mail whose next attempt is due by the test's
   * clock become due in the database (the queue compares with its now()).
   */
  async function due(): Promise<void> {
    await w.db.knex.raw(
      `update pgboss.job j set start_after = now() from mail_outbox m
        where j.name = 'accounts-mail' and j.state in ('created', 'retry') and (j.data->'p'->>'id')::uuid = m.id and m.next_attempt_at <= ?`,
      [w.clock.now()],
    );
  }
  /** Seconds until the mail queue's waiting jobs are due, by the database's clock. */
  async function jobsDueIn(): Promise<number[]> {
    const { rows } = await w.db.knex.raw(
      `select extract(epoch from start_after - now())::float8 as s from pgboss.job where name = 'accounts-mail' and state = 'created'`,
    );
    return rows.map((r: { s: number }) => Math.round(r.s));
  }
  before(async () => {
    w = await createWorld();
  });
  after(async () => w.close());
  beforeEach(async () => w.reset());
  afterEach(async () => {
    w.smtp.failNext(0);
    if (!w.smtp.port) await w.smtp.start();
  });

  it('sends text and HTML, from MAIL_FROM, with links on PUBLIC_BASE_URL whatever the Host header said', async () => {
    await request(w.app)
      .post('/api/v1/auth/register')
      .set('Host', 'evil.example')
      .set('X-Forwarded-Host', 'evil.example')
      .send({ email: 'ada@example.test', password: 'long enough', displayName: 'Ada <b>' });
    await w.deliver();
    const [mail] = mailsTo(w, 'ada@example.test');
    expect(mail!.from).to.equal('no-reply@meals.example.test');
    expect(mail!.text).to.not.contain('evil.example');
    expect(mail!.html).to.not.contain('evil.example');
    expect(mail!.html).to.contain('Ada &lt;b&gt;');
    const { url } = linkIn(mail!);
    expect(url.origin).to.equal('https://meals.example.test');
    expect(mail!.html).to.contain(url.href.replace(/&/g, '&amp;'));
  });

  it('delivers a sign-up mail written while SMTP was down, once SMTP is back', async () => {
    const port = w.smtp.port;
    await w.smtp.stop();
    w.smtp.port = 0;
    const res = await register(request(w.app), 'ada@example.test');
    expect(res.status).to.equal(200);
    expect(await w.accounts.service.deliverDueMail()).to.equal(0);
    const [row] = await w.db.knex('mail_outbox').select('attempts', 'sentAt', 'lastError', 'nextAttemptAt');
    expect(row).to.include({ attempts: 1, sentAt: null });
    expect(row.lastError).to.be.a('string');
    expect(row.nextAttemptAt.getTime()).to.equal(w.clock.now().getTime() + MAIL_RETRY.firstDelayMs);
    // The queue's retry waits the mail's own delay (30 s), not the queue's default backoff.
    expect(await jobsDueIn()).to.deep.equal([MAIL_RETRY.firstDelayMs / 1000]);

    await w.smtp.start(port);
    // Not before its retry time…
    expect(await w.accounts.service.deliverDueMail()).to.equal(0);
    w.clock.advance(MAIL_RETRY.firstDelayMs);
    await due();
    expect(await w.accounts.service.deliverDueMail()).to.equal(1);
    expect(mailsTo(w, 'ada@example.test')).to.have.length(1);
    expect(await w.accounts.service.deliverDueMail()).to.equal(0);
    expect(mailsTo(w, 'ada@example.test')).to.have.length(1);
  });

  it('retries a temporary SMTP failure with exponential backoff', async () => {
    await register(request(w.app), 'ada@example.test');
    w.smtp.failNext(3);
    const delays: number[] = [];
    const queued: number[] = [];
    for (let i = 0; i < 3; i++) {
      expect(await w.accounts.service.deliverDueMail()).to.equal(0);
      const [row] = await w.db.knex('mail_outbox').select('nextAttemptAt');
      delays.push(row.nextAttemptAt.getTime() - w.clock.now().getTime());
      queued.push(...(await jobsDueIn()));
      w.clock.set(row.nextAttemptAt);
      await due();
    }
    expect(delays).to.deep.equal([30_000, 60_000, 120_000]);
    expect(queued).to.deep.equal([30, 60, 120]);
    expect(await w.accounts.service.deliverDueMail()).to.equal(1);
    expect(mailsTo(w, 'ada@example.test')).to.have.length(1);
    const [row] = await w.db.knex('mail_outbox').select('attempts', 'textBody', 'htmlBody', 'sentAt');
    expect(row).to.include({ attempts: 4, textBody: '', htmlBody: '' });
    expect(row.sentAt).to.be.instanceOf(Date);
  });

  it('gives up after a bounded number of attempts and logs it as an error', async () => {
    await register(request(w.app), 'ada@example.test');
    w.smtp.failNext(1000);
    for (let i = 0; i < MAIL_RETRY.maxAttempts; i++) {
      await w.accounts.service.deliverDueMail();
      w.clock.advance(MAIL_RETRY.maxDelayMs);
      await due();
    }
    const [row] = await w.db.knex('mail_outbox').select('attempts', 'gaveUpAt', 'sentAt');
    expect(row.attempts).to.equal(MAIL_RETRY.maxAttempts);
    expect(row.gaveUpAt).to.be.instanceOf(Date);
    expect(row.sentAt).to.equal(null);
    w.smtp.failNext(0);
    expect(await w.accounts.service.deliverDueMail()).to.equal(0);
    // The queue holds nothing more for it: the job was given up, not rescheduled.
    expect(await jobsDueIn()).to.deep.equal([]);
    const errors = w.logLines.filter((l) => l.level === 50 && /gave up/.test(String(l.msg)));
    expect(errors).to.have.length(1);
    expect(JSON.stringify(errors[0])).to.not.contain('token=');
  });

  it('lets several instances deliver at once without sending any mail twice', async () => {
    for (let i = 0; i < 12; i++) await register(request(w.app), `user${i}@example.test`);
    const second = w.another();
    const third = w.another();
    const counts = await Promise.all([w.accounts.service.deliverDueMail(), second.accounts.service.deliverDueMail(), third.accounts.service.deliverDueMail()]);
    expect(counts.reduce((a, b) => a + b, 0)).to.equal(12);
    expect(w.smtp.mails).to.have.length(12);
    expect(new Set(w.smtp.mails.map((m) => m.to[0])).size).to.equal(12);
  });

  it('sends on its own once the job queue runs: the runner is nudged by each commit', async () => {
    const { accounts, app } = w.another();
    await accounts.jobs.start();
    try {
      await register(request(app), 'auto@example.test');
      const mail = await w.smtp.waitFor((m) => m.to.includes('auto@example.test'), 5000);
      expect(mail.subject).to.match(/confirm/i);
    } finally {
      await accounts.jobs.stop();
    }
  });

  it('without SMTP_URL writes each mail as an .eml file under DATA_DIR/mail and logs it without the body', async () => {
    const { accounts, app } = w.another({ smtpUrl: undefined });
    await register(request(app), 'file@example.test');
    expect(await accounts.service.deliverDueMail()).to.equal(1);
    const dir = path.join(w.config.dataDir, 'mail');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.eml'));
    expect(files).to.have.length(1);
    const eml = fs.readFileSync(path.join(dir, files[0]!), 'utf8');
    expect(eml).to.match(/^To: file@example\.test$/m);
    expect(eml).to.contain('confirm-email?userId=');
    const line = w.logLines.find((l) => l.msg === 'mail written to file')!;
    expect(line).to.include({ to: 'file@example.test' });
    expect(JSON.stringify(line)).to.not.contain('confirm-email?');
    expect(w.smtp.mails).to.have.length(0);
  });

  /** A nodemailer transport that runs `during` while "talking SMTP", then fails or succeeds. */
  function probeTransport(during: (messageId: string) => Promise<void>, fail: () => boolean) {
    return nodemailer.createTransport({
      name: 'probe',
      version: '1',
      send(mail: { data: { messageId?: string } }, callback: (err: Error | null, info?: unknown) => void) {
        const messageId = String(mail.data.messageId);
        during(messageId).then(
          () => (fail() ? callback(new Error('451 try again later')) : callback(null, { messageId, envelope: {} })),
          (err: Error) => callback(err),
        );
      },
    } as never);
  }

  it('holds no transaction and no row lock while it talks SMTP (issue 11): the row can be locked by anyone meanwhile', async () => {
    const locks: string[] = [];
    const { accounts, app } = w.another(
      {},
      {
        mailTransport: probeTransport(
          async () => {
            // NOWAIT: fails at once (55P03) if the worker still held the row while sending.
            try {
              await w.db.knex.transaction(async (trx) => {
                await trx.raw('select id from mail_outbox for update nowait');
              });
              locks.push('free');
            } catch (err) {
              locks.push((err as { code?: string }).code ?? 'error');
            }
            const open = await w.db.knex.raw(
              "select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'",
            );
            locks.push(`idle in transaction: ${open.rows[0].n}`);
          },
          () => false,
        ),
      },
    );
    await register(request(app), 'ada@example.test');
    expect(await accounts.service.deliverDueMail()).to.equal(1);
    expect(locks).to.deep.equal(['free', 'idle in transaction: 0']);
    const [row] = await w.db.knex('mail_outbox').select('attempts', 'sentAt');
    expect(row.attempts).to.equal(1);
    expect(row.sentAt).to.be.instanceOf(Date);
  });

  it('gives every attempt at one mail the same Message-ID, so a receiver can recognise a retry', async () => {
    const ids: string[] = [];
    let calls = 0;
    const { accounts, app } = w.another(
      {},
      {
        mailTransport: probeTransport(
          async (messageId) => {
            ids.push(messageId);
          },
          () => ++calls === 1,
        ),
      },
    );
    await register(request(app), 'ada@example.test');
    expect(await accounts.service.deliverDueMail()).to.equal(0);
    w.clock.advance(MAIL_RETRY.firstDelayMs);
    await due();
    expect(await accounts.service.deliverDueMail()).to.equal(1);
    const [row] = await w.db.knex('mail_outbox').select('id', 'attempts');
    expect(row.attempts).to.equal(2);
    expect(ids).to.deep.equal([`<${row.id}@meal-planner>`, `<${row.id}@meal-planner>`]);
  });

  it('an instance that dies while delivering leaves the mail to another after the queue expiry, not lost (at-least-once)', async () => {
    await register(request(w.app), 'ada@example.test');
    // What a runner leaves behind when it dies after taking the job: the job active, its outcome never recorded.
    await w.db.knex.raw(`update pgboss.job set state = 'active', started_on = now() where name = 'accounts-mail'`);
    const other = w.another();
    await other.accounts.jobs.expireAbandoned();
    expect(await other.accounts.service.deliverDueMail()).to.equal(0);
    // The expiry (10 minutes) passes, moved in the database instead of waited for.
    await w.db.knex.raw(`update pgboss.job set started_on = now() - interval '601 seconds' where name = 'accounts-mail'`);
    await other.accounts.jobs.expireAbandoned();
    expect(await other.accounts.service.deliverDueMail()).to.equal(1);
    expect(mailsTo(w, 'ada@example.test')).to.have.length(1);
  });

  it('one statement writes the mail and its delivery job: a rolled-back change leaves neither', async () => {
    await register(request(w.app), 'ada@example.test');
    const jobs = await w.db.knex.raw(`select data->'p'->>'id' as id from pgboss.job where name = 'accounts-mail'`);
    const rows = await w.db.knex('mail_outbox').select('id');
    expect(jobs.rows.map((r: { id: string }) => r.id)).to.deep.equal(rows.map((r: { id: string }) => r.id));
    await w.db.knex
      .transaction(async (trx) => {
        await trx('mail_outbox').insert({
          kind: 'confirm_email',
          recipient: 'x@example.test',
          subject: 's',
          textBody: 't',
          htmlBody: 'h',
          createdAt: w.clock.now(),
          nextAttemptAt: w.clock.now(),
        });
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect(await w.db.knex.raw(`select count(*)::int as n from pgboss.job where name = 'accounts-mail'`).then((r) => r.rows[0].n)).to.equal(1);
  });
});
