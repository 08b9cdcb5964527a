import { pino, type Logger } from 'pino';

export type { Logger };

// Structured JSON logs on stdout; secrets that may pass through request logs are redacted by path.
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.raw', '*.token'],
      censor: '[redacted]',
    },
  });
}
