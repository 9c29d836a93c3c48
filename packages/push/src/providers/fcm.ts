import http from 'node:http';
import https from 'node:https';
import type { Clock } from '@svc/contracts';
import { GiveUp, RetryLater } from '@svc/jobs';
import type { JWT } from 'google-auth-library';
import { collapseId, type PushMessage, type PushProvider, retryAfterMs, type SendOutcome } from './types.js';

/** The token endpoint google-auth-library signs for and calls; FCM_TOKEN_URL replaces it (staging, tests). */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';

/** The parts of a service-account JSON the provider uses. */
export interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

export interface FcmOptions {
  projectId: string;
  credentials: ServiceAccount;
  /** FCM_URL (default https://fcm.googleapis.com). */
  url: string;
  /** FCM_TOKEN_URL (default Google's OAuth token endpoint). */
  tokenUrl: string;
  clock: Clock;
  /** A send that has not answered by then is retried (default 10 s). */
  timeoutMs?: number;
  /** Connections to FCM kept open and used at once; more sends wait for one (default 64). */
  connections?: number;
}

/** FCM's values must be strings: strings stay, everything else is JSON-encoded. */
function stringValues(data: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

/**
 * FCM HTTP v1 (`POST {url}/v1/projects/{projectId}/messages:send`) with an OAuth 2 access token
 * from the service account (google-auth-library's JWT client: cached, renewed five minutes before
 * it expires; the library is loaded with the first send, so an instance that never pushes through
 * FCM never holds it: docs/benchmarks.md, "What the bench settled"). UNREGISTERED or 404: the token
 * is gone. 429, 5xx, a time-out or no connection: retried (`Retry-After` honoured). 401: the
 * access token is dropped and the send retried.
 */
export class FcmProvider implements PushProvider {
  readonly name = 'fcm';
  /** The access-token client, made with the first send (and again after a 401). */
  private jwt: Promise<JWT> | undefined;
  private readonly endpoint: string;
  private readonly timeoutMs: number;
  private readonly transport: typeof http | typeof https;
  /** Keep-alive connections to FCM, shared by every send. */
  private readonly agent: http.Agent;

  constructor(private readonly options: FcmOptions) {
    this.endpoint = `${options.url.replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(options.projectId)}/messages:send`;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    const secure = new URL(this.endpoint).protocol === 'https:';
    this.transport = secure ? https : http;
    // As many kept connections as are used at once: a fan-out of hundreds of sends would otherwise open
    // a connection per send and close every one beyond the agent's 256 idle ones (connect + close per send).
    const connections = options.connections ?? 64;
    const agentOptions = { keepAlive: true, maxSockets: connections, maxFreeSockets: connections };
    this.agent = secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  }

  private async client(): Promise<JWT> {
    const { credentials, tokenUrl } = this.options;
    const { JWT } = await import('google-auth-library');
    const jwt = new JWT({ email: credentials.client_email, key: credentials.private_key, keyId: credentials.private_key_id, scopes: [FCM_SCOPE] });
    // The library calls Google's endpoint by a fixed URL; FCM_TOKEN_URL points it elsewhere.
    if (tokenUrl !== GOOGLE_TOKEN_URL) {
      jwt.transporter.interceptors.request.add({
        resolved: async (config) => {
          if (String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(tokenUrl);
          return config;
        },
      });
    }
    return jwt;
  }

  async send(message: PushMessage, signal?: AbortSignal): Promise<SendOutcome> {
    let accessToken: string | null | undefined;
    try {
      if (!this.jwt) {
        const made = this.client();
        this.jwt = made;
        // A client that could not be made is made again by the next send (unless one was made since).
        made.catch(() => {
          if (this.jwt === made) this.jwt = undefined;
        });
      }
      accessToken = (await (await this.jwt).getAccessToken()).token;
    } catch (err) {
      throw new RetryLater(`fcm: no access token (${(err as Error).message.slice(0, 200)})`);
    }
    if (!accessToken) throw new RetryLater('fcm: no access token');
    const id = collapseId(message);
    const body = {
      message: {
        token: message.token,
        notification: { title: message.title, body: message.body },
        data: { ...stringValues(message.data), notificationId: message.id, householdId: message.householdId, kind: message.kind },
        android: { collapse_key: id, notification: { tag: id } },
        apns: { headers: { 'apns-collapse-id': id }, payload: { aps: { 'thread-id': id } } },
      },
    };
    let res: { status: number; retryAfter: string | undefined; body: string };
    try {
      res = await this.post(JSON.stringify(body), accessToken, signal);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new RetryLater(`fcm: ${e.message === 'timed out' ? 'timed out' : (e.code ?? e.name)}`);
    }
    if (res.status >= 200 && res.status < 300) return 'sent';
    let answer: { error?: { status?: string; details?: { errorCode?: string }[] } } = {};
    try {
      answer = JSON.parse(res.body) as typeof answer;
    } catch {
      /* no JSON body */
    }
    const errorCode = answer.error?.details?.find((d) => d.errorCode)?.errorCode;
    if (res.status === 404 || errorCode === 'UNREGISTERED') return 'gone';
    if (res.status === 429 || res.status >= 500) throw new RetryLater(`fcm answered ${res.status}`, retryAfterMs(res.retryAfter, this.options.clock.now()));
    if (res.status === 401) {
      this.jwt = undefined; // a revoked or stale access token: the next send asks for a new one
      throw new RetryLater('fcm answered 401');
    }
    throw new GiveUp(`fcm answered ${res.status} ${errorCode ?? answer.error?.status ?? ''}`.trim());
  }

  /**
   * One POST on the provider's keep-alive agent (node:http(s): far less work per send than
   * `fetch`, see docs/benchmarks.md, "What the bench settled"). Rejects on no connection, on
   * `signal`, and when no answer has come within the time-out.
   */
  private post(payload: string, accessToken: string, signal?: AbortSignal): Promise<{ status: number; retryAfter: string | undefined; body: string }> {
    return new Promise((resolve, reject) => {
      const req = this.transport.request(this.endpoint, {
        method: 'POST',
        agent: this.agent,
        headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
      });
      const timer = setTimeout(() => req.destroy(new Error('timed out')), this.timeoutMs);
      const onAbort = () => req.destroy(new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      req.on('error', (err) => {
        done();
        reject(err);
      });
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const retryAfter = res.headers['retry-after'];
        const ok = status >= 200 && status < 300;
        const chunks: Buffer[] = [];
        // A success's body is not read (only drained); a refusal's is, for its error code.
        res.on('data', (c: Buffer) => {
          if (!ok) chunks.push(c);
        });
        res.on('error', (err) => {
          done();
          reject(err);
        });
        res.on('end', () => {
          done();
          resolve({ status, retryAfter, body: Buffer.concat(chunks).toString('utf8') });
        });
        // Cut off mid-answer (time-out, abort, connection lost): no outcome, so retried (a settled promise ignores this).
        res.on('close', () => {
          done();
          reject(new Error(res.complete ? 'closed' : 'answer cut off'));
        });
      });
      req.end(payload);
    });
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}
