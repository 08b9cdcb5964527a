import { pino, type Logger } from 'pino';
import { traceFields } from './tracing.ts';

export type { Logger };

// A logged error, without what a database error carries of the rows it was about: PostgreSQL's `detail`
// ("Key (org_id, name)=(…, …) already exists", "Failing row contains (…)") and the statement's parameters hold
// tenants' data. Its code, constraint, table and column say what went wrong without them.
const ROW_VALUES = ['detail', 'parameters', 'params', 'where', 'internalQuery'];
function errorWithoutRowValues(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const serialized = pino.stdSerializers.err(err) as unknown as Record<string, unknown>;
  for (const key of ROW_VALUES) delete serialized[key];
  if (serialized.cause && typeof serialized.cause === 'object') {
    for (const key of ROW_VALUES) delete (serialized.cause as Record<string, unknown>)[key];
  }
  return serialized;
}

// Structured JSON logs on stdout; secrets that may pass through request logs are redacted by path, and errors
// lose their row values. Every line written inside a request or an activity names its trace, span and request
// ids (infra/tracing.ts).
export function createLogger(level: string, name: string, destination?: pino.DestinationStream): Logger {
  const options = {
    name,
    level,
    mixin: traceFields,
    serializers: { err: errorWithoutRowValues, cause: errorWithoutRowValues },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.raw', '*.token'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
