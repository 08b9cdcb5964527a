import { defineEntity, p } from '@mikro-orm/core';

// One row per piece of asynchronous work, written in the same transaction as the change that causes it.
// The relay turns each row into exactly one durable job run whose id is `jobKey`.
export const OutboxMessage = defineEntity({
  name: 'OutboxMessage',
  tableName: 'outbox',
  properties: {
    id: p.uuid().primary(),
    orgId: p.uuid().nullable(),
    jobType: p.text(),
    jobKey: p.text().unique(),
    args: p.json<unknown[]>(),
    description: p.text(),
    createdAt: p.datetime(),
    dispatchedAt: p.datetime().nullable(),
    attempts: p.integer(),
    lastError: p.text().nullable(),
  },
});
export type OutboxMessage = InstanceType<typeof OutboxMessage.class>;
