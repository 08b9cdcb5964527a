import type { EntityManager } from '@mikro-orm/postgresql';
import { query, sql } from '../sql.ts';
import { termFrequencies } from './analyzer.ts';

// Writes a memory's postings in the caller's transaction, so the memory is searchable the moment its
// write commits: one memory_terms row per term, which the org's curator later folds into blocks (fold.ts).
// Returns the analyzed length (the BM25 document length).
export async function indexContent(em: EntityManager, orgId: string, memoryId: string, content: string): Promise<number> {
  const analyzed = termFrequencies(content);
  if (analyzed.terms.size > 0) {
    await query(
      em,
      sql`insert into memory_terms (org_id, term, memory_id, tf, doc_len)
        select ${orgId}, t, ${memoryId}, f, ${analyzed.length} from unnest(${[...analyzed.terms.keys()]}::text[], ${[...analyzed.terms.values()]}::int[]) as u(t, f)`,
    );
  }
  return analyzed.length;
}

// Makes memories unsearchable, in the caller's transaction, which holds their rows locked: their rows not
// folded yet go (re-analysing each memory names every key exactly, so no index by memory is needed), and a
// folded memory's document number becomes a tombstone, which searches skip until the blocks are rewritten.
export async function unindexMemories(em: EntityManager, orgId: string, memories: { id: string; content: string }[]): Promise<void> {
  if (memories.length === 0) return;
  const terms: string[] = [];
  const owners: string[] = [];
  for (const memory of memories) {
    for (const term of termFrequencies(memory.content).terms.keys()) {
      terms.push(term);
      owners.push(memory.id);
    }
  }
  await query(
    em,
    sql`with staged as (delete from memory_terms mt using unnest(${terms}::text[], ${owners}::uuid[]) as u(t, m) where mt.org_id = ${orgId} and mt.term = u.t and mt.memory_id = u.m),
      folded as (delete from lexical_docs where org_id = ${orgId} and memory_id = any(${memories.map((m) => m.id)}::uuid[]) returning docnum)
      insert into lexical_tombstones (org_id, docnum) select ${orgId}, docnum from folded`,
  );
}

