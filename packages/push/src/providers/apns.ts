import http2 from 'node:http2';
import type { Clock } from '@svc/contracts';
import { GiveUp, RetryLater } from '@svc/jobs';
import { importPKCS8, SignJWT } from 'jose';
import { collapseId, type PushMessage, type PushProvider, retryAfterMs, type SendOutcome } from './types.js';

export interface ApnsOptions {
  keyId: string;
  teamId: string;
  /** The .p8 key (PKCS#8 PEM of a P-256 key). */
  key: string;
  /** APNS_TOPIC: the app's bundle id. */
  topic: string;
  /** APNS_URL (default https://api.push.apple.com). */
  url: string;
  clock: Clock;
  /** A send that has not answered by then is retried (default 10 s). */
  timeoutMs?: number;
  /** Extra CA certificates to trust (tests: the fake's own certificate). */
  ca?: string;
}

/** Apple refuses provider tokens older than an hour and more than one new token per 20 minutes: renew at 50. */
const TOKEN_RENEW_MS = 50 * 60_000;

/**
 * APNs over HTTP/2 with a provider token (ES256 JWT signed with the .p8 key, `kid` the key id,
 * `iss` the team id; made again after 50 minutes or when APNs calls it expired). One HTTP/2
 * session is kept open and shared by every send; a session that closes or errs is replaced at
 * the next send. 410 or BadDeviceToken: the token is gone. 429, 5xx, a time-out or no connection:
 * retried (`Retry-After` honoured when sent).
 */
export class ApnsProvider implements PushProvider {
  readonly name = 'apns';
  private session: http2.ClientHttp2Session | undefined;
  private token: { jwt: string; madeAt: number } | undefined;
  private signingKey: ReturnType<typeof importPKCS8> | undefined;
  private readonly timeoutMs: number;

  constructor(private readonly options: ApnsOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  private async providerToken(): Promise<string> {
    const now = this.options.clock.now().getTime();
    if (this.token && now - this.token.madeAt < TOKEN_RENEW_MS) return this.token.jwt;
    this.signingKey ??= importPKCS8(this.options.key, 'ES256');
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.options.keyId })
      .setIssuer(this.options.teamId)
      .setIssuedAt(Math.floor(now / 1000))
      .sign(await this.signingKey);
    this.token = { jwt, madeAt: now };
    return jwt;
  }

  private connection(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const session = http2.connect(this.options.url, this.options.ca ? { ca: this.options.ca } : {});
    const forget = () => {
      if (this.session === session) this.session = undefined;
    };
    session.on('error', forget);
    session.on('goaway', forget);
    session.on('close', forget);
    // The open session does not keep the process alive by itself (stop closes it).
    session.unref();
    this.session = session;
    return session;
  }

  async send(message: PushMessage, signal?: AbortSignal): Promise<SendOutcome> {
    const id = collapseId(message);
    const payload = {
      aps: { alert: { title: message.title, body: message.body }, 'thread-id': id, sound: 'default' },
      notificationId: message.id,
      householdId: message.householdId,
      kind: message.kind,
      data: message.data,
    };
    const headers = {
      ':method': 'POST',
      ':path': `/3/device/${encodeURIComponent(message.token)}`,
      authorization: `bearer ${await this.providerToken()}`,
      'apns-topic': this.options.topic,
      'apns-push-type': 'alert',
      'apns-priority': '10',
      'apns-collapse-id': id,
      'content-type': 'application/json',
    };
    const { status, headers: answerHeaders, body } = await this.request(headers, JSON.stringify(payload), signal);
    if (status === 200) return 'sent';
    let reason = '';
    try {
      reason = String((JSON.parse(body) as { reason?: unknown }).reason ?? '');
    } catch {
      /* no JSON body */
    }
    if (status === 410 || reason === 'BadDeviceToken') return 'gone';
    if (status === 403 && reason === 'ExpiredProviderToken') {
      this.token = undefined;
      throw new RetryLater('apns: provider token expired');
    }
    if (status === 429 || status >= 500) {
      const after = answerHeaders['retry-after'];
      throw new RetryLater(`apns answered ${status} ${reason}`.trim(), retryAfterMs(Array.isArray(after) ? after[0] : after, this.options.clock.now()));
    }
    throw new GiveUp(`apns answered ${status} ${reason}`.trim());
  }

  private request(
    headers: http2.OutgoingHttpHeaders,
    payload: string,
    signal?: AbortSignal,
  ): Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string }> {
    return new Promise((resolve, reject) => {
      let req: http2.ClientHttp2Stream;
      try {
        req = this.connection().request(headers);
      } catch (err) {
        reject(new RetryLater(`apns: ${(err as Error).message}`));
        return;
      }
      let status = 0;
      let answerHeaders: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      const fail = (why: string) => {
        req.close(http2.constants.NGHTTP2_CANCEL);
        reject(new RetryLater(`apns: ${why}`));
      };
      const onAbort = () => fail('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      req.setTimeout(this.timeoutMs, () => fail('timed out'));
      req.on('response', (h) => {
        status = Number(h[':status']);
        answerHeaders = h;
      });
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('error', (err) => reject(new RetryLater(`apns: ${err.message}`)));
      req.on('close', () => {
        signal?.removeEventListener('abort', onAbort);
        if (status) resolve({ status, headers: answerHeaders, body: Buffer.concat(chunks).toString('utf8') });
        else reject(new RetryLater('apns: stream closed without an answer'));
      });
      req.end(payload);
    });
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (session && !session.closed) await new Promise<void>((resolve) => session.close(() => resolve()));
  }
}
