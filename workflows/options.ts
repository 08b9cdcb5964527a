import type { ActivityOptions } from '@temporalio/workflow';

// A database transaction: quick, retried briefly, then surfaced.
export const TRANSACTION: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 },
};

// Talking to another system (mail, webhooks, LLMs): patient retries for up to a day.
export const EXTERNAL_CALL: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '24 hours',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
};
