import { defineEntity, p } from '@mikro-orm/core';

export const AuditEvent = defineEntity({
  name: 'AuditEvent',
  tableName: 'audit_events',
  properties: {
    orgId: p.uuid().primary(),
    id: p.uuid().primary(),
    action: p.text(),
    targetId: p.text().nullable(),
    actorUserId: p.uuid().nullable(),
    actorToken: p.uuid().nullable(),
    details: p.json<Record<string, unknown>>(),
    createdAt: p.datetime(),
  },
});
export type AuditEvent = InstanceType<typeof AuditEvent.class>;
