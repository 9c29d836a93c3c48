import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { newTraceId } from './trace.js';

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Content Too Large', 431: 'Request Header Fields Too Large' };

/** How long a whole request (headers and body) may take to arrive; a slower one is answered 408 and its connection closed. */
export const REQUEST_TIMEOUT_MS = 25_000;
/** How long the headers of a request may take to arrive. */
export const HEADERS_TIMEOUT_MS = 20_000;
/** How often Node looks for requests past those limits (a trickled request lives at most the limit plus this). */
export const CONNECTIONS_CHECK_MS = 2_000;

export interface HttpServerOptions {
  /** Default REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
  /** Default HEADERS_TIMEOUT_MS (at most the request timeout). */
  headersTimeoutMs?: number;
  /** Default CONNECTIONS_CHECK_MS. */
  connectionsCheckMs?: number;
}

/**
 * The HTTP server for an app. Node answers some malformed requests itself, before Express sees
 * them (a URL or headers over 16 kB, a broken request line): this server answers those too with
 * a problem+json body and a trace id, like every other error, and closes the connection.
 *
 * A request must arrive whole within 25 s (Node's `requestTimeout`; its default, 300 s, let a body
 * trickled a byte at a time hold a connection and a parser for minutes): a slower one is answered
 * 408 `request_timeout` and its connection closed, within the check interval after the limit.
 */
export function createHttpServer(app: Express, options: HttpServerOptions = {}): http.Server {
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server = http.createServer(
    {
      requestTimeout,
      headersTimeout: Math.min(options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS, requestTimeout),
      connectionsCheckingInterval: options.connectionsCheckMs ?? CONNECTIONS_CHECK_MS,
    },
    app,
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // An answer already under way on this connection (the route answered before its body came): nothing more can be said on it.
    const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (!socket.writable || answering || (err as { code?: string }).code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const code = (err as { code?: string }).code;
    const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const traceId = newTraceId();
    const body = JSON.stringify({
      type: 'about:blank',
      title: REASONS[status],
      status,
      detail:
        status === 431 ? 'The request line or headers are too large' : status === 408 ? 'The request took too long to arrive' : 'The request is not valid HTTP',
      instance: null,
      code: status === 431 ? 'request_too_large' : status === 408 ? 'request_timeout' : 'validation_failed',
      traceId,
    });
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Trace-Id: ${traceId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
