import { defineEntity, p } from '@mikro-orm/core';

export const WEBHOOK_EVENTS = ['memory.saved', 'memory.updated', 'memory.deleted', 'conversation.extracted'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: {
    // The key is (org_id, id) as in the schema (0013_tenant_keys), so the ORM's updates name the org too.
    orgId: p.uuid().primary(),
    id: p.uuid().primary(),
    url: p.text(),
    events: p.array<string>(),
    description: p.text(),
    enabled: p.boolean(),
    // Sealed (secrets.ts); the plain column holds only secrets written before sealing, until they are sealed.
    secret: p.text().nullable(),
    secretSealed: p.blob().nullable(),
    lastSuccessAt: p.datetime().nullable(),
    lastFailureAt: p.datetime().nullable(),
    consecutiveFailures: p.integer(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type WebhookEndpoint = InstanceType<typeof WebhookEndpoint.class>;
