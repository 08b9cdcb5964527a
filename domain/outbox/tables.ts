import { defineEntity, p } from '@mikro-orm/core';

// One row per piece of asynchronous work, written in the same transaction as the change that causes it.
// The relay turns each row into exactly one durable job run whose id is `jobKey`.
export const OutboxMessage = defineEntity({
  name: 'OutboxMessage',
  tableName: 'outbox',
  properties: {
    // NO_ORG (enqueue.ts) for the jobs of no org.
    orgId: p.uuid().primary(),
    id: p.uuid().primary(),
    jobType: p.text(),
    jobKey: p.text().unique(),
    args: p.json<unknown[]>(),
    description: p.text(),
    createdAt: p.datetime(),
    dispatchedAt: p.datetime().nullable(),
    attempts: p.integer(),
    lastError: p.text().nullable(),
    // Set while a relay dispatches the row (temporal/outbox-relay.ts); a dead relay's claim simply runs out.
    claimedUntil: p.datetime().nullable(),
    // After a failed dispatch: not before then. After the last attempt: parked, with last_error.
    nextAttemptAt: p.datetime().nullable(),
    failedAt: p.datetime().nullable(),
    // The W3C trace context (and baggage) of the write that caused the job, for the workflow to continue.
    traceContext: p.json<Record<string, string>>().nullable(),
  },
});
export type OutboxMessage = InstanceType<typeof OutboxMessage.class>;
