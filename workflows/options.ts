import type { ActivityOptions } from '@temporalio/workflow';

// A database transaction: quick, retried briefly, then surfaced.
export const TRANSACTION: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 },
};

// Bookkeeping after the work (releasing a caller's sealed keys): retried until it succeeds, at most a minute apart,
// so that a database outage longer than a transaction's retries leaves nothing behind and fails nothing.
export const BOOKKEEPING: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
};

// Talking to another system (mail, webhooks, LLMs): patient retries for up to a day.
export const EXTERNAL_CALL: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '24 hours',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
};

// One model call (the provider layer already fails over and retries briefly inside it): outages are
// retried with backoff for about an hour; a refused key or malformed answer is final.
export const LLM_CALL: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 16 },
};

// A model call someone is waiting for (a merge, a detect run): a few quick attempts, then the answer is an error.
export const INTERACTIVE_LLM_CALL: ActivityOptions = {
  startToCloseTimeout: '3 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
};

// An org's embedding batch: the model may be down for a while (a remote provider) or the worker without one
// (a bad configuration); the actor keeps retrying, capped at a minute apart, and its backlog waits meanwhile.
export const EMBEDDING_BATCH: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
};

// One batch of an erasure (a deleted project or org): retried for as long as it takes, at most a minute
// apart; what the user deleted must go.
export const ERASURE: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
};

// Folding an org's postings: bounded work per attempt (about 10 s of folds; compacting the tombstones of an org
// of a million memories rewrites its blocks, about a minute), retried like a transaction. It heartbeats, so an
// attempt lost with its worker (killed, or its completion lost while Temporal was down) is retried within the
// heartbeat timeout rather than left holding the org's fold loop until the start-to-close timeout.
export const POSTINGS_FOLD: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
};

// Building or dropping an org's vector index, with its rows moved between indexes: minutes for a large org, alive
// as long as it heartbeats (a worker that dies stops a build with its connection); retried a few times, then left
// to the next run.
export const VECTOR_INDEX_WORK: ActivityOptions = {
  startToCloseTimeout: '3 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 3 },
};
