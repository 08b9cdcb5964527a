import { Migration } from '@mikro-orm/migrations';

// Thread context in semantic search (domain/store/thread-context.ts): the vector searched for a memory of a
// thread mixes in the chunks before it, so the vector of its text alone is kept beside it (`text_embedding`, null
// for a memory outside a thread, whose `embedding` is its text's vector) for reuse by identical text and for
// mixing into the chunks after it.
// Thread order gets an index of its own, replacing the one by (org, parent_ref): the chunks before or after a
// memory are then an index range of a few rows however long the thread. Building it reads the memories of
// threads once and blocks writes to memories meanwhile; a deployment with many can build it first with
// `create index concurrently` (the same statement); this migration then finds it and only drops the old index.
export class Migration0020ThreadContext extends Migration {
  override up(): void {
    this.addSql(`alter table memory_embeddings add column if not exists text_embedding vector(384)`);
    // A row with both vectors (3.1 KB) is past PostgreSQL's 2 KB threshold for moving values out of line: one
    // vector then went to the TOAST table, a second insert on every write and a second read on every exact scan.
    // Rows up to a page's size stay whole.
    this.addSql(`alter table memory_embeddings set (toast_tuple_target = 8160)`);
    this.addSql(
      `create index if not exists memories_thread_order_idx on memories (org_id, (metadata->>'parent_ref'),
         (coalesce(case when jsonb_typeof(metadata->'chunk_index') = 'number' then (metadata->>'chunk_index')::numeric end, 'Infinity')), created_at, id)
       where metadata ? 'parent_ref'`,
    );
    this.addSql(`drop index if exists memories_parent_ref_idx`);
  }
}
