import { defineEntity, p } from '@mikro-orm/core';

// A project and a namespace are the same thing; memories point at it by id, so a rename moves nothing.
export const Namespace = defineEntity({
  name: 'Namespace',
  tableName: 'namespaces',
  properties: {
    // The key is (org_id, id) as in the schema (0013_tenant_keys), so the ORM's updates name the org too.
    orgId: p.uuid().primary(),
    id: p.uuid().primary(),
    name: p.text(),
    description: p.text().nullable(),
    metadata: p.json<Record<string, unknown>>(),
    archivedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Namespace = InstanceType<typeof Namespace.class>;
