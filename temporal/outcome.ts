import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { AppError, ERROR_KINDS, type ErrorKind } from '../domain/errors.ts';

const KINDS = new Set<string>(ERROR_KINDS);

// A workflow that failed because of a domain error (activities/failures.ts keeps its code and kind) answers
// the HTTP caller with that same error; any other failure is an unavailable dependency.
export function asAppError(err: unknown): unknown {
  if (!(err instanceof WorkflowFailedError)) return err;
  let cause: unknown = err.cause;
  while (cause instanceof Error && !(cause instanceof ApplicationFailure) && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure && cause.type) {
    const kind = cause.details?.[0];
    if (typeof kind === 'string' && KINDS.has(kind)) return new AppError(kind as ErrorKind, cause.type, cause.message);
  }
  return new AppError('unavailable', 'workflow_failed', 'the background work failed; try again');
}
