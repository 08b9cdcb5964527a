import type { EntityManager } from '@mikro-orm/postgresql';
import { query, sql } from '../sql.ts';
import { termFrequencies } from './analyzer.ts';

// Writes a memory's postings in the caller's transaction, so the memory is searchable the moment its
// write commits. Returns the analyzed length (the BM25 document length).
export async function indexContent(em: EntityManager, orgId: string, memoryId: string, content: string): Promise<number> {
  const { terms, length } = termFrequencies(content);
  if (terms.size > 0) {
    await query(
      em,
      sql`insert into memory_terms (org_id, term, memory_id, tf, doc_len)
          select ${orgId}, t, ${memoryId}, f, ${length} from unnest(${[...terms.keys()]}::text[], ${[...terms.values()]}::int[]) as u(t, f)`,
    );
  }
  return length;
}

// Removes exactly the postings `content` produced: the analyzer names every key, so no index by memory is needed.
export async function unindexContent(em: EntityManager, orgId: string, memoryId: string, content: string): Promise<void> {
  const { terms } = termFrequencies(content);
  if (terms.size === 0) return;
  await query(em, sql`delete from memory_terms where org_id = ${orgId} and term = any(${[...terms.keys()]}::text[]) and memory_id = ${memoryId}`);
}
