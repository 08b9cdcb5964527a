import type { Middleware } from 'koa';
import { z } from 'zod';
import { errorJson, UNAUTHORIZED_REASONS, type ErrorCode } from '../../domain/error-codes.ts';
import { AppError, type ErrorKind } from '../../domain/errors.ts';
import { databaseTrouble, type DatabaseTrouble } from '../../domain/sql.ts';
import { rateLimitRefusals } from '../../infra/metrics.ts';
import type { AppState } from './state.ts';

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media: 415,
  rate_limited: 429,
  upstream: 502,
  unavailable: 503,
};

export const statusOf = (kind: ErrorKind): number => STATUS[kind];

export const errorBody = z
  .object({
    error: z.string().meta({ description: 'machine-readable error code (docs/errors.md lists them all)' }),
    message: z.string().optional(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    reason: z.enum(UNAUTHORIZED_REASONS).optional().meta({ description: 'on a 401 `unauthorized`: which of its four cases it is' }),
  })
  .catchall(z.unknown())
  .meta({ id: 'Error' });

export class ValidationError extends AppError {
  constructor(where: 'body' | 'query' | 'path', error: z.ZodError, code: ErrorCode = 'validation_failed') {
    const issues = error.issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message }));
    super('invalid', code, issues.map((i) => `${i.path}: ${i.message}`).join('; '), { issues });
  }
}

interface HttpishError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
}

// The database's own trouble is no fault of the request: 503, and the clients' retry after a few seconds is safe.
const DATABASE_TROUBLE: Record<DatabaseTrouble, [ErrorCode, string]> = {
  busy: ['database_busy', 'every database connection is in use; try again shortly'],
  timeout: ['database_timeout', 'the database did not answer within its deadline; try again shortly'],
  down: ['database_unavailable', 'the database cannot be reached; try again shortly'],
};
const DATABASE_RETRY_AFTER_SECONDS = 2;

function asKnownError(err: unknown): unknown {
  const trouble = databaseTrouble(err);
  if (!trouble) return err;
  const [code, message] = DATABASE_TROUBLE[trouble];
  return new AppError('unavailable', code, message, { retry_after: DATABASE_RETRY_AFTER_SECONDS });
}

// A service error as every route answers it: its status, `{ error, message?, ...extra }`, and its Retry-After.
export function errorReply(err: AppError): { status: number; body: Record<string, unknown>; retryAfter: string | undefined } {
  const retryAfter = typeof err.extra.retry_after === 'number' ? String(err.extra.retry_after) : undefined;
  const body = { error: err.error, ...(err.detail !== undefined ? { message: err.detail } : {}), ...err.extra };
  return { status: statusOf(err.kind), body, retryAfter };
}

// Maps every failure to `{ error, message?, ...extra }` with its status; nothing else writes error bodies (errorReply
// builds them).
export const errorHandler: Middleware<AppState> = async (ctx, next) => {
  try {
    await next();
  } catch (caught) {
    const err = asKnownError(caught);
    if (err instanceof AppError) {
      if (err !== caught) ctx.state.log.warn({ cause: (caught as Error).message }, err.error);
      const reply = errorReply(err);
      ctx.status = reply.status;
      ctx.body = reply.body;
      if (err.kind === 'rate_limited') rateLimitRefusals.inc({ limit: err.error });
      if (reply.retryAfter !== undefined) ctx.set('Retry-After', reply.retryAfter);
      return;
    }
    const e = err as HttpishError;
    const status = e.status ?? e.statusCode ?? 500;
    if (status === 400 && (e.type === 'entity.parse.failed' || err instanceof SyntaxError)) {
      ctx.status = 400;
      ctx.body = errorJson('invalid json', 'the request body is not valid JSON');
    } else if (status === 413) {
      ctx.status = 413;
      ctx.body = errorJson('payload_too_large', 'the request body is larger than this route accepts');
    } else if (status === 405 || status === 501) {
      ctx.status = 405;
      ctx.body = errorJson('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`);
    } else if (status >= 400 && status < 500 && e.expose) {
      ctx.status = status;
      ctx.body = errorJson('bad_request', e.message ?? 'the request could not be read');
    } else if (e.type === 'stream.not.readable' && ctx.req.destroyed) {
      // The client closed the connection while its request waited (for its credential's lookup, say) and before its
      // body was read: nobody is there to answer, and nothing failed on our side. As the body parser's own "request
      // aborted", it counts as a 400, not as a server error in the logs and metrics.
      ctx.status = 400;
      ctx.body = errorJson('request_aborted', 'the client closed the connection before its request body was read');
    } else {
      ctx.state.log.error({ err }, 'unhandled error');
      ctx.status = 500;
      ctx.body = errorJson('internal_error', 'something went wrong on our side; the request id identifies it in our logs');
    }
  }
};
