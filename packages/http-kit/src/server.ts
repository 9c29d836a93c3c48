import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { newTraceId } from './trace.js';

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Content Too Large', 431: 'Request Header Fields Too Large' };

/**
 * The HTTP server for an app. Node answers some malformed requests itself, before Express sees
 * them (a URL or headers over 16 kB, a broken request line): this server answers those too with
 * a problem+json body and a trace id, like every other error, and closes the connection.
 */
export function createHttpServer(app: Express): http.Server {
  const server = http.createServer(expressServerOptions(app), app);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (err as { code?: string }).code === 'ECONNRESET') {
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

/**
 * Server options under which Node makes each request and response with the prototypes Express
 * gives them (`app.request`, `app.response`) from the start. Express 5 sets those prototypes on
 * every request (`Object.setPrototypeOf(req, app.request)`, the same for `res`); on objects made
 * as plain IncomingMessage and ServerResponse, that change of prototype costs V8 a new hidden
 * class each time and, worse, kept most of every request's objects alive through the next young
 * collection, so they were promoted to the old generation and died there: measured on Node 20, a
 * bare Express app answering `{"a":1}` went from 10,600 to 29,700 req/s, its young collections from
 * 3.5 MB promoted each (3.5 ms pauses, a full collection every ~300 ms) to nothing promoted (0.25
 * ms). Made with the right prototype, Express's own `setPrototypeOf` finds it already there and
 * changes nothing. Without `request`/`response` (a plain listener), or on a Node whose
 * IncomingMessage is an ES class (not callable without `new`), no options: Node's own classes.
 */
export function expressServerOptions(app: unknown): http.ServerOptions {
  const { request, response } = (app ?? {}) as { request?: object; response?: object };
  if (!request || !response || !(request instanceof http.IncomingMessage) || !(response instanceof http.ServerResponse)) return {};
  if ([http.IncomingMessage, http.ServerResponse].some((c) => /^class\b/.test(Function.prototype.toString.call(c)))) return {};
  const incoming = http.IncomingMessage as unknown as (this: unknown, socket: Socket) => void;
  const outgoing = http.ServerResponse as unknown as (this: unknown, req: http.IncomingMessage, options?: unknown) => void;
  function AppRequest(this: unknown, socket: Socket) {
    incoming.call(this, socket);
  }
  AppRequest.prototype = request;
  function AppResponse(this: unknown, req: http.IncomingMessage, options?: unknown) {
    outgoing.call(this, req, options);
  }
  AppResponse.prototype = response;
  return { IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage, ServerResponse: AppResponse as unknown as typeof http.ServerResponse };
}
