import { ApplicationFailure } from '@temporalio/activity';
import { AppError } from '../domain/errors.ts';

const PERMANENT = new Set(['invalid', 'conflict', 'not_found', 'forbidden', 'payment_required', 'too_large', 'upstream']);

// Domain errors keep their error string as the failure type and their kind in the details, so a workflow's
// caller can answer with the same error (temporal/outcome.ts). Refusals that will not change on retry are
// non-retryable; the rest (a provider outage) is left to the retry policy, as is anything else (database
// down, SMTP timeout).
export async function asActivity<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError) {
      throw ApplicationFailure.create({
        type: err.error,
        message: err.detail ?? err.error,
        nonRetryable: PERMANENT.has(err.kind),
        details: [err.kind],
      });
    }
    throw err;
  }
}
