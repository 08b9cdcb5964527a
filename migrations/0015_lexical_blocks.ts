import { Migration } from '@mikro-orm/migrations';

// Postings kept as compact blocks (issue 14). A save still writes one memory_terms row per term, so the memory
// is found the moment it commits; the org's curator then folds those rows into per-term blocks and memory_terms
// holds only the postings not folded yet. Scoring a block costs a few nanoseconds per posting in the service
// instead of a PostgreSQL row each (the postings-blocks study measured it).
// - lexical_state: the org's next document number (a fold locks this row: one folder per org).
// - lexical_docs: which memory a document number stands for. A memory deleted, edited or moved loses its row
//   and its number becomes a tombstone until the blocks are rewritten without it.
// - lexical_blocks: one term's postings for a run of document numbers, ascending (domain/search/blocks.ts).
export class Migration0015LexicalBlocks extends Migration {
  override up(): void {
    this.addSql(`
      create table lexical_state (
        org_id uuid primary key,
        next_docnum int not null default 0
      )`);
    this.addSql(`
      create table lexical_docs (
        org_id uuid not null,
        docnum int not null,
        memory_id uuid not null,
        constraint lexical_docs_pk primary key (org_id, docnum),
        constraint lexical_docs_memory_key unique (org_id, memory_id)
      )`);
    this.addSql(`
      create table lexical_tombstones (
        org_id uuid not null,
        docnum int not null,
        constraint lexical_tombstones_pk primary key (org_id, docnum)
      )`);
    this.addSql(`
      create table lexical_blocks (
        org_id uuid not null,
        term text not null,
        first_docnum int not null,
        docs int not null,
        wide boolean not null,
        data bytea not null,
        constraint lexical_blocks_pk primary key (org_id, term, first_docnum)
      )`);
    // Stored as they are: compression would cost a decompression on every read of a block.
    this.addSql(`alter table lexical_blocks alter column data set storage external`);
    // A search filters by checking its best candidates' rows (domain/search/lexical.ts), so the postings no longer
    // carry the memory's namespace.
    this.addSql(`alter table memory_terms drop constraint memory_terms_pk`);
    this.addSql(`alter table memory_terms drop column namespace_id`);
    this.addSql(`alter table memory_terms add constraint memory_terms_pk primary key (org_id, term, memory_id) include (tf, doc_len)`);
  }
}
