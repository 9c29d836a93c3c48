import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake received: its headers and parsed JSON body. */
export interface ChatRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** How the fake answers the next requests. */
export type ChatBehaviour =
  /** 200 with a chat completion whose message content is this text. */
  | { answer: string }
  /** This HTTP status with an OpenAI-style error body. */
  | { status: number }
  /** Never answers (until `stop`): a model slower than any deadline. */
  | { hang: true };

/**
 * A local OpenAI-compatible chat-completions endpoint (`POST {url}/chat/completions`) for tests of
 * code that asks a language model: it records every request and answers as told.
 */
export class FakeChatModel {
  readonly requests: ChatRequest[] = [];
  behaviour: ChatBehaviour = { answer: '{}' };
  private server: http.Server | undefined;
  private hanging: http.ServerResponse[] = [];
  private arrivals: (() => void)[] = [];

  /** The base URL to configure (`http://127.0.0.1:<port>/v1`). */
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Resolves when the next request has arrived (for a test that acts while a request is in flight). */
  nextRequest(): Promise<void> {
    return new Promise((resolve) => this.arrivals.push(resolve));
  }

  /** A chat completion's content as the model's JSON answer. */
  answerWith(value: unknown): void {
    this.behaviour = { answer: JSON.stringify(value) };
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging = [];
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): void {
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      // recorded as empty: the test sees what arrived
    }
    this.requests.push({ path: req.url ?? '', headers: req.headers, body });
    for (const arrived of this.arrivals.splice(0)) arrived();
    const b = this.behaviour;
    if ('hang' in b) {
      this.hanging.push(res);
      return;
    }
    if ('status' in b) {
      res.writeHead(b.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'fake failure', type: 'server_error' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${this.requests.length}`,
        object: 'chat.completion',
        created: 1_764_000_000,
        model: String(body.model ?? 'fake'),
        choices: [{ index: 0, message: { role: 'assistant', content: b.answer }, finish_reason: 'stop' }],
      }),
    );
  }
}
