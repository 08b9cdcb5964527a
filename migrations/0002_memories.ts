import { Migration } from '@mikro-orm/migrations';

// Memories, projects (namespaces), the BM25 postings, sharded counters, the event log that feeds
// webhooks, idempotency keys and the recall log.
export class Migration0002Memories extends Migration {
  override up(): void {
    this.addSql(`
      create table namespaces (
        id uuid primary key,
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        name text not null,
        description text,
        metadata jsonb not null default '{}',
        archived_at timestamptz(3),
        created_at timestamptz(3) not null,
        updated_at timestamptz(3) not null,
        constraint namespaces_org_name_unique unique (org_id, name)
      )`);
    // No foreign keys on the tables every save writes (memories, memory_terms, events, counters): each
    // would take a KEY SHARE lock on the org's or namespace's row at commit, and concurrent saves into one
    // org then queue on multixacts of that one row. The domain deletes dependants explicitly instead.
    this.addSql(`
      create table memories (
        id uuid primary key,
        org_id uuid not null,
        namespace_id uuid not null,
        content text not null,
        content_bytes integer not null,
        doc_len integer not null,
        tags text[] not null default '{}',
        source text not null,
        source_ref text,
        metadata jsonb not null default '{}',
        created_at timestamptz(3) not null,
        updated_at timestamptz(3) not null
      )`);
    this.addSql(`create index memories_org_updated_idx on memories (org_id, updated_at desc, id desc)`);
    this.addSql(`create index memories_org_created_idx on memories (org_id, created_at desc, id desc)`);
    this.addSql(`create index memories_namespace_updated_idx on memories (namespace_id, updated_at desc, id desc)`);
    this.addSql(`create index memories_namespace_created_idx on memories (namespace_id, created_at desc, id desc)`);
    this.addSql(`create index memories_tags_idx on memories using gin (tags)`);
    this.addSql(`create index memories_metadata_idx on memories using gin (metadata jsonb_path_ops)`);
    this.addSql(`create index memories_parent_ref_idx on memories (org_id, (metadata->>'parent_ref')) where metadata ? 'parent_ref'`);

    // BM25 postings: one row per (memory, analyzed term), carrying the term frequency and the memory's
    // length (and namespace, the most common search filter) so that scoring never has to join the memories
    // table per posting. No foreign key and no
    // index by memory: each would cost one more index operation per posting on every save; the domain
    // deletes a memory's postings by re-analysing its content, which names every key exactly.
    this.addSql(`
      create table memory_terms (
        org_id uuid not null,
        term text not null,
        memory_id uuid not null,
        namespace_id uuid not null,
        tf integer not null,
        doc_len integer not null,
        constraint memory_terms_pk primary key (org_id, term, memory_id) include (tf, doc_len, namespace_id)
      )`);
    // Postings churn with every edit; vacuum them eagerly so dead tuples do not slow the index scans.
    this.addSql(`alter table memory_terms set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02)`);

    // Counters that every write of an org touches (document count, lengths, bytes, lifetime creations,
    // per-namespace counts) are spread over shards, so concurrent writers rarely wait on one row; a read
    // sums the shards.
    this.addSql(`
      create table counters (
        scope_id uuid not null,
        name text not null,
        shard smallint not null,
        value bigint not null,
        constraint counters_pk primary key (scope_id, name, shard)
      )`);

    // Domain events in commit order; the webhook dispatcher reads them by id. Written in the transaction
    // of the change they describe.
    this.addSql(`
      create table events (
        id bigint generated always as identity primary key,
        org_id uuid not null,
        type text not null,
        data jsonb not null,
        created_at timestamptz(3) not null default now(),
        dispatched_at timestamptz(3)
      )`);
    this.addSql(`create index events_pending_idx on events (id) where dispatched_at is null`);

    this.addSql(`
      create table idempotency_keys (
        org_id uuid not null,
        key text not null,
        request_hash text not null,
        status integer not null,
        body jsonb not null,
        created_at timestamptz(3) not null,
        constraint idempotency_keys_pk primary key (org_id, key)
      )`);
    this.addSql(`create index idempotency_keys_created_idx on idempotency_keys (created_at)`);

    this.addSql(`
      create table recalls (
        id uuid primary key,
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        memory_id uuid not null references memories (id) on delete cascade deferrable initially deferred,
        source text,
        query text,
        recalled_by uuid,
        recalled_at timestamptz(3) not null
      )`);
    this.addSql(`create index recalls_org_time_idx on recalls (org_id, recalled_at desc)`);
    this.addSql(`create index recalls_memory_idx on recalls (memory_id, recalled_at desc)`);
  }
}
