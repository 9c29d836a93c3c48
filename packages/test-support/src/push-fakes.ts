import { createPublicKey, createVerify, generateKeyPairSync, type KeyObject } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

/** How a fake answers one send: the status, headers and JSON body; `hang` never answers (until stop). */
export interface FakeAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  hang?: boolean;
}

/** A message the FCM fake accepted: the token it was for and the `message` object as sent. */
export interface FcmDelivery {
  token: string;
  message: Record<string, unknown>;
  authorization: string;
}

function decodeJwtPart(part: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

/** Verifies a compact JWS (RS256 or ES256) with `key`; answers its payload or undefined. */
function verifyJwt(jwt: string, key: KeyObject): { header: Record<string, unknown>; payload: Record<string, unknown> } | undefined {
  const parts = jwt.split('.');
  if (parts.length !== 3) return undefined;
  const [h, p, s] = parts as [string, string, string];
  let header: Record<string, unknown>;
  try {
    header = decodeJwtPart(h);
  } catch {
    return undefined;
  }
  const alg = header.alg === 'RS256' ? 'RSA-SHA256' : header.alg === 'ES256' ? 'SHA256' : undefined;
  if (!alg) return undefined;
  const verifier = createVerify(alg);
  verifier.update(`${h}.${p}`);
  const ok = verifier.verify(header.alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key, Buffer.from(s, 'base64url'));
  return ok ? { header, payload: decodeJwtPart(p) } : undefined;
}

/**
 * A local FCM HTTP v1: the OAuth token endpoint (`POST {tokenUrl}`, a service-account JWT
 * assertion checked against the account's public key) and `POST {url}/v1/projects/{id}/messages:send`
 * (the bearer must be a token it issued and has not expired). It records what it accepted and
 * answers as scripted: `script` answers the next sends in order, `answerFor` answers every send to
 * a token, `unregister(token)` makes a token answer 404 UNREGISTERED as FCM does for an app that
 * was uninstalled.
 */
export class FakeFcm {
  /** A service account (JSON as Google issues it) whose key the token endpoint checks. */
  readonly serviceAccount: { type: string; project_id: string; private_key_id: string; private_key: string; client_email: string; token_uri: string };
  readonly delivered: FcmDelivery[] = [];
  /** Every send request that arrived, answered or not. */
  sends = 0;
  tokenRequests = 0;
  /** TCP connections accepted (a client keeping its connections open makes few). */
  connections = 0;
  /** Lifetime of the access tokens it issues, in seconds. */
  tokenLifetimeSeconds = 3600;
  /**
   * Each accepted send is answered (and recorded) this many ms after it arrived, as a provider
   * across the internet answers (0: at once). For benchmarks; tests script answers instead.
   */
  latencyMs = 0;
  readonly script: FakeAnswer[] = [];
  readonly answerFor = new Map<string, FakeAnswer>();
  private readonly unregistered = new Set<string>();
  private readonly issued = new Map<string, number>();
  private readonly publicKey: KeyObject;
  private server: http.Server | undefined;
  private hanging: http.ServerResponse[] = [];
  url = '';
  tokenUrl = '';
  /** The fake's clock for token expiry (ms); tests may move it. */
  now: () => number = () => Date.now();

  constructor(readonly projectId = 'test-project') {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKey = publicKey;
    this.serviceAccount = {
      type: 'service_account',
      project_id: projectId,
      private_key_id: 'test-key-1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: `push@${projectId}.iam.gserviceaccount.com`,
      token_uri: '',
    };
  }

  unregister(token: string): void {
    this.unregistered.add(token);
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    this.server.on('connection', () => {
      this.connections++;
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    this.tokenUrl = `${this.url}/token`;
    this.serviceAccount.token_uri = this.tokenUrl;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging.splice(0)) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string) {
    if (req.method === 'POST' && req.url === '/token') {
      this.tokenRequests++;
      const form = new URLSearchParams(raw);
      const claims =
        form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer' ? verifyJwt(form.get('assertion') ?? '', this.publicKey) : undefined;
      if (!claims || claims.payload.iss !== this.serviceAccount.client_email)
        return this.json(res, 400, { error: 'invalid_grant', error_description: 'bad assertion' });
      const token = `fake-access-${this.tokenRequests}`;
      this.issued.set(token, this.now() + this.tokenLifetimeSeconds * 1000);
      return this.json(res, 200, { access_token: token, expires_in: this.tokenLifetimeSeconds, token_type: 'Bearer' });
    }
    const send = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !send) return this.json(res, 404, { error: { code: 404, status: 'NOT_FOUND' } });
    this.sends++;
    const authorization = req.headers.authorization ?? '';
    const bearer = /^Bearer (.+)$/.exec(authorization)?.[1];
    const expires = bearer ? this.issued.get(bearer) : undefined;
    if (send[1] !== this.projectId || expires === undefined || expires <= this.now())
      return this.json(res, 401, { error: { code: 401, status: 'UNAUTHENTICATED', message: 'Request had invalid authentication credentials.' } });
    let message: Record<string, unknown>;
    try {
      message = (JSON.parse(raw) as { message: Record<string, unknown> }).message;
    } catch {
      return this.json(res, 400, { error: { code: 400, status: 'INVALID_ARGUMENT' } });
    }
    const token = String(message.token ?? '');
    const scripted = this.script.shift() ?? this.answerFor.get(token);
    if (scripted?.hang) {
      this.hanging.push(res);
      return;
    }
    if (scripted) return this.json(res, scripted.status, scripted.body ?? {}, scripted.headers);
    if (this.unregistered.has(token))
      return this.json(res, 404, {
        error: {
          code: 404,
          status: 'NOT_FOUND',
          message: 'Requested entity was not found.',
          details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }],
        },
      });
    const accept = () => {
      this.delivered.push({ token, message, authorization });
      this.json(res, 200, { name: `projects/${this.projectId}/messages/${this.delivered.length}` });
    };
    if (this.latencyMs > 0) setTimeout(accept, this.latencyMs);
    else accept();
  }
}

/** A notification the APNs fake accepted: the device token, the request headers and the JSON payload. */
export interface ApnsDelivery {
  token: string;
  headers: http2.IncomingHttpHeaders;
  payload: Record<string, unknown>;
}

/**
 * A local APNs: HTTP/2 over TLS with a certificate made for the test (`ca` is what a client must
 * trust), `POST /3/device/{token}` with a provider token (an ES256 JWT checked against the .p8's
 * public key, `iss` the team id, `kid` the key id, no older than an hour). It records what it
 * accepted and how many TLS connections it saw; `script`/`answerFor` script answers, and
 * `unregister(token)` answers 410 Unregistered.
 */
export class FakeApns {
  readonly delivered: ApnsDelivery[] = [];
  sends = 0;
  /** TLS connections accepted (a provider that keeps one session open makes one). */
  connections = 0;
  /** The `iat` of every distinct provider token seen. */
  readonly providerTokens = new Set<string>();
  readonly script: FakeAnswer[] = [];
  readonly answerFor = new Map<string, FakeAnswer>();
  /** The .p8 (PKCS#8 PEM of a P-256 key) to configure as APNS_KEY. */
  readonly p8: string;
  readonly keyId = 'ABC123DEFG';
  readonly teamId = 'TEAM123456';
  ca = '';
  url = '';
  now: () => number = () => Date.now();
  private readonly unregistered = new Set<string>();
  private readonly publicKey: KeyObject;
  private server: http2.Http2SecureServer | undefined;
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private pems: { private: string; cert: string } | undefined;

  constructor() {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.p8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    this.publicKey = createPublicKey(privateKey);
  }

  unregister(token: string): void {
    this.unregistered.add(token);
  }

  /** Listens on `port` (0: any free one; a restart may name the previous one). */
  async start(port = 0): Promise<void> {
    // Made once: a restarted fake keeps its certificate, as a real server does.
    this.pems ??= await generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      extensions: [
        {
          name: 'subjectAltName',
          altNames: [
            { type: 7, ip: '127.0.0.1' },
            { type: 2, value: 'localhost' },
          ],
        },
      ],
    });
    this.ca = this.pems.cert;
    this.server = http2.createSecureServer({ key: this.pems.private, cert: this.pems.cert });
    this.server.on('session', (s) => {
      this.connections++;
      this.sessions.add(s);
      s.on('close', () => this.sessions.delete(s));
    });
    this.server.on('stream', (stream, headers) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => this.handle(stream, headers, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const s of this.sessions) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private answer(stream: http2.ServerHttp2Stream, status: number, body?: unknown, headers: Record<string, string> = {}): void {
    if (stream.destroyed) return;
    stream.respond({ ':status': status, 'apns-id': '00000000-0000-0000-0000-000000000000', ...headers });
    stream.end(body === undefined ? undefined : JSON.stringify(body));
  }

  private handle(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, raw: string) {
    const m = /^\/3\/device\/([^/]+)$/.exec(String(headers[':path'] ?? ''));
    if (headers[':method'] !== 'POST' || !m) return this.answer(stream, 404, { reason: 'BadPath' });
    this.sends++;
    const token = m[1]!;
    const jwt = /^bearer (.+)$/i.exec(String(headers.authorization ?? ''))?.[1] ?? '';
    const claims = verifyJwt(jwt, this.publicKey);
    if (!claims || claims.header.kid !== this.keyId || claims.payload.iss !== this.teamId) return this.answer(stream, 403, { reason: 'InvalidProviderToken' });
    if (this.now() / 1000 - Number(claims.payload.iat) > 3600) return this.answer(stream, 403, { reason: 'ExpiredProviderToken' });
    this.providerTokens.add(String(claims.payload.iat));
    if (!headers['apns-topic']) return this.answer(stream, 400, { reason: 'MissingTopic' });
    const scripted = this.script.shift() ?? this.answerFor.get(token);
    if (scripted?.hang) return;
    if (scripted) return this.answer(stream, scripted.status, scripted.body, scripted.headers);
    if (this.unregistered.has(token)) return this.answer(stream, 410, { reason: 'Unregistered', timestamp: this.now() });
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(raw);
    } catch {
      return this.answer(stream, 400, { reason: 'PayloadEmpty' });
    }
    this.delivered.push({ token, headers, payload });
    this.answer(stream, 200);
  }
}
