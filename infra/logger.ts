import { pino, type Logger } from 'pino';
import { traceFields } from './tracing.ts';

export type { Logger };

// Structured JSON logs on stdout; secrets that may pass through request logs are redacted by path. Every
// line written inside a request or an activity names its trace, span and request ids (infra/tracing.ts).
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    mixin: traceFields,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.raw', '*.token'],
      censor: '[redacted]',
    },
  });
}
