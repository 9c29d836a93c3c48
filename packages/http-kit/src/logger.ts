import { type Logger, type LoggerOptions, pino } from 'pino';

/**
 * JSON lines on stdout. Redaction is a second line of defence: nothing should log a cookie,
 * password, token or mail body in the first place.
 */
export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  const opts: LoggerOptions = {
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    name: options.name,
    base: undefined,
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
