import http from 'node:http';
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
  const server = http.createServer(app);
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
