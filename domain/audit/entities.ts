import { defineEntity, p } from '@mikro-orm/core';

export const AuditEvent = defineEntity({
  name: 'AuditEvent',
  tableName: 'audit_events',
  properties: {
    id: p.uuid().primary(),
    orgId: p.uuid(),
    action: p.text(),
    targetId: p.text().nullable(),
    actorUserId: p.uuid().nullable(),
    actorToken: p.uuid().nullable(),
    details: p.json<Record<string, unknown>>(),
    createdAt: p.datetime(),
  },
});
export type AuditEvent = InstanceType<typeof AuditEvent.class>;
