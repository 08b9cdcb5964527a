import { ApplicationFailure } from '@temporalio/activity';
import { AppError } from '../domain/errors.ts';

const PERMANENT = new Set(['invalid', 'conflict', 'not_found', 'forbidden', 'payment_required', 'too_large']);

// Domain refusals will not change on retry: report them as non-retryable with the domain's error string
// as the failure type. Everything else (database down, SMTP timeout) is left to the retry policy.
export async function asActivity<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError && PERMANENT.has(err.kind)) {
      throw ApplicationFailure.create({ type: err.error, message: err.detail ?? err.error, nonRetryable: true, details: [err.kind] });
    }
    throw err;
  }
}
