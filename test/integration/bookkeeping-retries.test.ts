import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishExport } from '../../domain/exports/exports.ts';
import { eventually, signUp, startStack, type Stack } from '../support/stack.ts';

// The bookkeeping that ends a job (an export's outcome) is retried until it succeeds: a database outage longer than
// a transaction's retries used to leave the job pending for good. Here the export's pages fail for good and its
// outcome cannot be recorded for a few attempts; the outcome still lands, and the retry policy Temporal recorded
// for it has no last attempt.
let stack: Stack;
let recordAttempts = 0;
beforeAll(async () => {
  stack = await startStack({ worker: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  stack.worker = await stack.startWorker({
    exportPage: async () => {
      throw ApplicationFailure.nonRetryable('the database is away', 'DatabaseAway');
    },
    finishExport: async (input) => {
      if (++recordAttempts <= 3) throw ApplicationFailure.retryable('the database is still away', 'DatabaseAway');
      await finishExport(stack.orm.em.fork(), input.exportId, input.error);
    },
  });
});
afterAll(async () => {
  await stack?.close();
});

describe('bookkeeping after an outage', () => {
  it("records a failed export's outcome however many attempts it takes", { timeout: 60_000 }, async () => {
    const a = await signUp(stack.api);
    await stack.api.post('/api/memories', { token: a.token, body: { content: 'Something to export' } });
    const started = await stack.api.post('/api/memories/exports', { token: a.token, body: { format: 'ndjson' } });
    expect(started.status).toBe(202);
    const done = await eventually(async () => {
      const res = await stack.api.get(`/api/memories/exports/${started.body.id}`, { token: a.token });
      return res.body.status !== 'pending' && res.body;
    }, 45_000);
    expect(done).toMatchObject({ status: 'failed', error: expect.stringContaining('the database is away') });
    expect(recordAttempts).toBe(4);
    // What Temporal was told: a page gives up after its attempts, the outcome never does.
    const history = await stack.temporal.workflow.getHandle(`export-${started.body.id}`).fetchHistory();
    const policies = new Map(
      (history.events ?? [])
        .map((e) => e.activityTaskScheduledEventAttributes)
        .filter((a) => a)
        .map((a) => [a!.activityType!.name, a!.retryPolicy!.maximumAttempts ?? 0]),
    );
    expect(policies).toEqual(
      new Map([
        ['exportPage', 10],
        ['finishExport', 0],
      ]),
    );
  });
});
