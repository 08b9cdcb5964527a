import { Migration } from '@mikro-orm/migrations';

// Orgs that hold many vectors get an HNSW index of their own (domain/store/vector-indexes.ts), and their vectors
// then leave the shared index: `own_index` marks a row that its org's own index serves, and the shared index
// becomes partial, over the other rows. Kept in both, a large org's vectors would cost two HNSW inserts each,
// which slowed each vector's write and the time from a save to its vector.
// Rebuilding the shared index blocks writes to memory_embeddings while it runs (long for a large table). A
// deployment with many vectors can add the column and build the index first without blocking (the
// same statements, with `create index concurrently`); this migration then finds both and only drops the old index.
export class Migration0019OwnVectorIndexes extends Migration {
  override up(): void {
    this.addSql(`alter table memory_embeddings add column if not exists own_index boolean not null default false`);
    // The graph of a large table outgrows PostgreSQL's default 64 MB, and a build past that is far slower.
    this.addSql(`set local maintenance_work_mem = '512MB'`);
    this.addSql(
      `create index if not exists memory_embeddings_shared_idx on memory_embeddings using hnsw ((embedding::halfvec(384)) halfvec_cosine_ops) with (m = 16, ef_construction = 64) where not own_index`,
    );
    this.addSql(`drop index if exists memory_embeddings_halfvec_idx`);
    // Finds, for the vector-indexes workflow, an org with its own index whose rows have not all moved out of the
    // shared one (a move cut short), without walking the org's rows.
    this.addSql(`create index if not exists memory_embeddings_shared_org_idx on memory_embeddings (org_id) where not own_index`);
  }
}
