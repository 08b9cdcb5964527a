import { Migration } from '@mikro-orm/migrations';

// Every table that holds one org's data is keyed by org first (issue "a million memories in one tenant"), so
// the schema can be distributed by org_id on a sharded PostgreSQL (Citus, docs/operations.md): its primary key
// and every unique key start with org_id, and its foreign keys to other tenant tables carry org_id, which is
// what a distributed table needs. test/integration/tenant-keys.test.ts holds every table to that rule or to
// an explicit place among the shared tables.
// The domain's statements name the org with every id, so the composite keys serve them; the two rows that
// background work finds by id alone (an export job, a webhook delivery) keep a plain index on id.
const NO_ORG = '00000000-0000-0000-0000-000000000000';

// Tables keyed by id alone until now; they become (org_id, id).
const BY_ID = [
  'audit_events',
  'chat_messages',
  'chat_sessions',
  'consolidation_proposals',
  'entities',
  'events',
  'export_jobs',
  'llm_key_escrow',
  'memories',
  'namespaces',
  'outbox',
  'recalls',
  'runbooks',
  'webhook_attempts',
  'webhook_deliveries',
  'webhook_endpoints',
];

// Foreign keys between tenant tables: dropped while the keys they reference change, re-created with org_id.
const TENANT_FKS: { table: string; name: string; columns: string; references: string }[] = [
  { table: 'recalls', name: 'recalls_memory_id_fkey', columns: 'memory_id', references: 'memories' },
  { table: 'memory_entities', name: 'memory_entities_entity_id_fkey', columns: 'entity_id', references: 'entities' },
  { table: 'memory_entities', name: 'memory_entities_memory_id_fkey', columns: 'memory_id', references: 'memories' },
  { table: 'consolidation_proposals', name: 'consolidation_proposals_memory_a_id_fkey', columns: 'memory_a_id', references: 'memories' },
  { table: 'consolidation_proposals', name: 'consolidation_proposals_memory_b_id_fkey', columns: 'memory_b_id', references: 'memories' },
  { table: 'webhook_deliveries', name: 'webhook_deliveries_endpoint_id_fkey', columns: 'endpoint_id', references: 'webhook_endpoints' },
  { table: 'webhook_attempts', name: 'webhook_attempts_delivery_id_fkey', columns: 'delivery_id', references: 'webhook_deliveries' },
  { table: 'export_chunks', name: 'export_chunks_export_id_fkey', columns: 'export_id', references: 'export_jobs' },
  { table: 'chat_messages', name: 'chat_messages_session_id_fkey', columns: 'session_id', references: 'chat_sessions' },
];

export class Migration0013TenantKeys extends Migration {
  override up(): void {
    for (const fk of TENANT_FKS) this.addSql(`alter table ${fk.table} drop constraint ${fk.name}`);

    // org_id where a table had it only through its parent row.
    for (const [table, parent, column] of [
      ['export_chunks', 'export_jobs', 'export_id'],
      ['webhook_attempts', 'webhook_deliveries', 'delivery_id'],
      ['chat_messages', 'chat_sessions', 'session_id'],
    ] as const) {
      this.addSql(`alter table ${table} add column org_id uuid`);
      this.addSql(`update ${table} c set org_id = p.org_id from ${parent} p where p.id = c.${column}`);
      this.addSql(`alter table ${table} alter column org_id set not null`);
    }
    // A counter's scope is an org or one of its namespaces. Counters of neither (a deleted project's or org's
    // whose delete raced this migration) are read by nothing.
    this.addSql(`alter table counters add column org_id uuid`);
    this.addSql(
      `update counters c set org_id = coalesce((select o.id from orgs o where o.id = c.scope_id), (select n.org_id from namespaces n where n.id = c.scope_id))`,
    );
    this.addSql(`delete from counters where org_id is null`);
    this.addSql(`alter table counters alter column org_id set not null`);
    // A distribution column holds no nulls: the jobs of no org (a password reset mail, a payment event of an
    // unknown customer) are filed under the nil uuid (domain/outbox/enqueue.ts).
    this.addSql(`update outbox set org_id = '${NO_ORG}' where org_id is null`);
    this.addSql(`alter table outbox alter column org_id set not null`);

    for (const table of BY_ID)
      this.addSql(`alter table ${table} drop constraint ${table}_pkey, add constraint ${table}_pkey primary key (org_id, id)`);
    this.addSql(
      `alter table memory_embeddings drop constraint memory_embeddings_pkey, add constraint memory_embeddings_pkey primary key (org_id, memory_id)`,
    );
    this.addSql(
      `alter table memory_entities drop constraint memory_entities_pk, add constraint memory_entities_pk primary key (org_id, entity_id, memory_id)`,
    );
    this.addSql(
      `alter table export_chunks drop constraint export_chunks_pk, add constraint export_chunks_pk primary key (org_id, export_id, seq)`,
    );
    this.addSql(`alter table counters drop constraint counters_pk, add constraint counters_pk primary key (org_id, scope_id, name, shard)`);
    // Job keys are made from ids of the org's own rows, so they stay unique within the org.
    this.addSql(`alter table outbox drop constraint outbox_job_key_unique, add constraint outbox_job_key_unique unique (org_id, job_key)`);

    for (const fk of TENANT_FKS) {
      this.addSql(
        `alter table ${fk.table} add constraint ${fk.name} foreign key (org_id, ${fk.columns}) references ${fk.references} (org_id, id) on delete cascade deferrable initially deferred`,
      );
    }

    // Indexes that find rows by a parent's id, now by org and parent (they also serve the cascades above).
    this.addSql(`drop index memory_entities_org_idx`); // (org_id, entity_id): the primary key's prefix now
    for (const [name, table, columns] of [
      ['memory_entities_memory_idx', 'memory_entities', 'org_id, memory_id'],
      ['recalls_memory_idx', 'recalls', 'org_id, memory_id, recalled_at desc'],
      ['consolidation_memory_b_idx', 'consolidation_proposals', 'org_id, memory_b_id'],
      ['webhook_deliveries_endpoint_idx', 'webhook_deliveries', 'org_id, endpoint_id, created_at desc'],
      ['webhook_attempts_delivery_idx', 'webhook_attempts', 'org_id, delivery_id, attempt'],
      ['chat_messages_session_idx', 'chat_messages', 'org_id, session_id, id'],
    ] as const) {
      this.addSql(`drop index ${name}`);
      this.addSql(`create index ${name} on ${table} (${columns})`);
    }
    // The export and delivery workflows carry only their row's id; their activities find the row by it.
    this.addSql(`create index export_jobs_id_idx on export_jobs (id)`);
    this.addSql(`create index webhook_deliveries_id_idx on webhook_deliveries (id)`);
  }
}
