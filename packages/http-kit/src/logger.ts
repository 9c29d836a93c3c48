import { createRequire } from 'node:module';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';

/** `json`: one JSON object a line (for machines); `pretty`: one readable line per event (for a person at a terminal). */
export type LogFormat = 'json' | 'pretty';

/**
 * The format when none is asked for: `LOG_FORMAT` when set, else `pretty` on a terminal outside
 * production, else `json` (a pipe, a file, a container's log collector, `NODE_ENV=production`).
 */
export function defaultLogFormat(env: NodeJS.ProcessEnv = process.env, terminal = process.stdout.isTTY === true): LogFormat {
  if (env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty') return env.LOG_FORMAT;
  return terminal && env.NODE_ENV !== 'production' ? 'pretty' : 'json';
}

/**
 * pino-pretty as a synchronous stream in this thread (no transport worker): lines are written
 * before the process exits, and production (JSON) never loads it.
 */
function prettyStream(): DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as (options: Record<string, unknown>) => DestinationStream;
  return pretty({
    sync: true,
    singleLine: true,
    colorize: process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,instance,name',
  });
}

/**
 * JSON lines on stdout, ISO timestamps, `instance` and `pid` on every line when an instance name
 * is given; or, with `format: 'pretty'`, one readable line per event (see defaultLogFormat).
 * Redaction is a second line of defence: nothing should log a cookie,
 * password, token or mail body in the first place.
 */
export function createLogger(options: { level?: string; name?: string; instance?: string; format?: LogFormat } = {}): Logger {
  const opts: LoggerOptions = {
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    name: options.name,
    // Every line names the instance (and its process) when given, so lines of several instances can be told apart.
    base: options.instance ? { instance: options.instance, pid: process.pid } : undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'password',
        '*.password',
        'newPassword',
        '*.newPassword',
        'currentPassword',
        'token',
        '*.token',
        'cookie',
        '*.cookie',
        'headers.cookie',
        'req.headers.cookie',
        'authorization',
        '*.authorization',
        'html',
        'text',
        '*.html',
        '*.text',
      ],
      censor: '[redacted]',
    },
  };
  return (options.format ?? defaultLogFormat()) === 'pretty' ? pino(opts, prettyStream()) : pino(opts);
}

export type { Logger };
