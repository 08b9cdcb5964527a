import { ApplicationFailure, isGrpcServiceError, ServiceError, WorkflowFailedError } from '@temporalio/client';
import { isErrorCode } from '../domain/error-codes.ts';
import { AppError, ERROR_KINDS, type ErrorKind } from '../domain/errors.ts';

const KINDS = new Set<string>(ERROR_KINDS);

// A workflow that failed because of a domain error (activities/failures.ts keeps its code and kind) answers
// the HTTP caller with that same error; any other failure is an unavailable dependency.
export function asAppError(err: unknown): unknown {
  if (!(err instanceof WorkflowFailedError)) return err;
  let cause: unknown = err.cause;
  while (cause instanceof Error && !(cause instanceof ApplicationFailure) && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure && isErrorCode(cause.type)) {
    const kind = cause.details?.[0];
    if (typeof kind === 'string' && KINDS.has(kind)) return new AppError(kind as ErrorKind, cause.type, cause.message);
  }
  return new AppError('unavailable', 'workflow_failed', 'the background work failed; try again');
}

// gRPC status codes that mean Temporal's own trouble (down, overloaded, timing out) rather than a refusal of
// the call: CANCELLED 1, UNKNOWN 2, DEADLINE_EXCEEDED 4, PERMISSION_DENIED 7, RESOURCE_EXHAUSTED 8, ABORTED 10,
// INTERNAL 13, UNAVAILABLE 14, UNAUTHENTICATED 16.
const SERVICE_DOWN_CODES = new Set([1, 2, 4, 7, 8, 10, 13, 14, 16]);

function grpcCode(err: unknown): number | undefined {
  if (isGrpcServiceError(err)) return err.code;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return isGrpcServiceError(cause) ? cause.code : undefined;
}

// Whether a client call failed because Temporal could not be reached or did not answer in time.
export function isTemporalDown(err: unknown): boolean {
  const code = grpcCode(err);
  if (code !== undefined) return SERVICE_DOWN_CODES.has(code);
  // A lazy connection that cannot connect at all fails before any call has a status.
  return err instanceof ServiceError || (err instanceof Error && err.name === 'TransportError');
}
