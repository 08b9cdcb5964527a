import { Migration } from '@mikro-orm/migrations';

// Semantic recall (issue 10): one vector per memory, in an HNSW index (pgvector >= 0.8, cosine distance).
export class Migration0011Embeddings extends Migration {
  override up(): void {
    this.addSql(`create extension if not exists vector`);
    // The vector of a memory's current content, written by the org's curator workflow after the save
    // commits. `model` names what made it (a change of model re-embeds in the background) and
    // `content_hash` (md5 of the content) lets identical text reuse a vector instead of running the model.
    // An edit of the content or a delete removes the row in its own transaction, so a row is never stale.
    // No foreign key, as for the postings: saves and deletes touch this table at the same rate as memories.
    this.addSql(`
      create table memory_embeddings (
        memory_id uuid primary key,
        org_id uuid not null,
        model text not null,
        content_hash text not null,
        embedding vector(384) not null,
        embedded_at timestamptz(3) not null default now()
      )`);
    // One index for every tenant: pgvector's iterative scan keeps reading it until k rows of the org pass
    // the filters (domain/search/semantic.ts), and an exact scan through the org index covers the rest.
    this.addSql(
      `create index memory_embeddings_hnsw_idx on memory_embeddings using hnsw (embedding vector_cosine_ops) with (m = 16, ef_construction = 64)`,
    );
    // The org's vectors by text: reuse for identical content, counts of what is embedded, exact scans.
    this.addSql(`create index memory_embeddings_org_idx on memory_embeddings (org_id, model, content_hash)`);
  }
}
