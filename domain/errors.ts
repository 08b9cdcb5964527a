import type { ErrorCode, NotFoundKind, UnauthorizedReason } from './error-codes.ts';

// The one error type of the service. Domain code throws it with a kind; the HTTP layer maps the kind
// to a status and the rest to the JSON body `{ error, message?, ...extra }`. Its codes are those of error-codes.ts.
export const ERROR_KINDS = [
  'invalid',
  'unauthenticated',
  'forbidden',
  'not_found',
  'conflict',
  'payment_required',
  'too_large',
  // The request body is of a type the route does not read (HTTP only, but kept with the others: one error type).
  'unsupported_media',
  'rate_limited',
  // A service we depend on answered, but not usefully (an LLM provider refused a key or gave malformed output).
  'upstream',
  'unavailable',
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly error: ErrorCode;
  readonly detail: string | undefined;
  readonly extra: Record<string, unknown>;

  constructor(kind: ErrorKind, error: ErrorCode, detail?: string, extra: Record<string, unknown> = {}) {
    super(detail ?? error);
    this.name = 'AppError';
    this.kind = kind;
    this.error = error;
    this.detail = detail;
    this.extra = extra;
  }
}

// Names what was not found and the id asked for, and nothing else: another org's id answers exactly as a missing one.
export const notFound = (kind: NotFoundKind, id: string): AppError => new AppError('not_found', 'not found', `${kind} ${id} not found`);
// This process has more of some kind of work waiting than it lets wait: 503 with Retry-After, safe to repeat.
const SERVER_BUSY_RETRY_AFTER_SECONDS = 1;
export const serverBusy = (detail: string): AppError =>
  new AppError('unavailable', 'server_busy', `${detail}; try again shortly`, { retry_after: SERVER_BUSY_RETRY_AFTER_SECONDS });
// A request refused for a limit, 429 with Retry-After: `what` was exceeded (its code says which kind of limit).
export const rateLimited = (error: ErrorCode, what: string, retryAfterSeconds: number): AppError =>
  new AppError('rate_limited', error, `${what}; retry in ${retryAfterSeconds} s`, { retry_after: retryAfterSeconds });
export const forbidden = (detail: string): AppError => new AppError('forbidden', 'forbidden', detail);
// A 401 says which of its four cases it is, in `reason` and in words.
export const unauthenticated = (reason: UnauthorizedReason, detail: string): AppError =>
  new AppError('unauthenticated', 'unauthorized', detail, { reason });
export const conflict = (error: ErrorCode, detail?: string): AppError => new AppError('conflict', error, detail);
export const invalid = (error: ErrorCode, detail?: string, extra?: Record<string, unknown>): AppError =>
  new AppError('invalid', error, detail, extra);
