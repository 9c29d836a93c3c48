import { type Logger, type LoggerOptions, pino } from 'pino';

/**
 * JSON lines on stdout, ISO timestamps, `instance` and `pid` on every line when an instance name
 * is given. Redaction is a second line of defence: nothing should log a cookie,
 * password, token or mail body in the first place.
 */
export function createLogger(options: { level?: string; name?: string; instance?: string } = {}): Logger {
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
  return pino(opts);
}

export type { Logger };
