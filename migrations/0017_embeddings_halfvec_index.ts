import { Migration } from '@mikro-orm/migrations';

// The HNSW index holds each vector at half precision (pgvector's halfvec, 2 bytes a dimension); the table keeps
// the full vectors, which score the hits and serve exact scans. The index is smaller and faster to search, and
// finds as many of an exact scan's answers. domain/search/semantic.ts orders by the same
// expression, so the planner can use it.
// The build blocks writes to memory_embeddings while it runs (long for a large table). A deployment with many
// vectors can build the index first without blocking, with the same statement and `create index concurrently`;
// this migration then finds it and only drops the old one.
export class Migration0017EmbeddingsHalfvecIndex extends Migration {
  override up(): void {
    this.addSql(
      `create index if not exists memory_embeddings_halfvec_idx on memory_embeddings using hnsw ((embedding::halfvec(384)) halfvec_cosine_ops) with (m = 16, ef_construction = 64)`,
    );
    this.addSql(`drop index if exists memory_embeddings_hnsw_idx`);
  }
}
