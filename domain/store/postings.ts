import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { query, sql } from '../sql.ts';
import { termFrequencies } from './analyzer.ts';

// A memory's postings are staged as one lexical_staged row, {term: tf}, written in the transaction that writes
// the memory, so it is searchable the moment that commits; the org's curator later folds staged rows into
// blocks (fold.ts). `source` yields (org_id, memory_id, doc_len, tfs jsonb) rows; a memory with no term is never
// staged (nothing can find it lexically, and it takes no document number).
export const stageSql = (source: RawBuilder<unknown>): RawBuilder<unknown> =>
  sql`insert into lexical_staged (org_id, memory_id, doc_len, tfs)
    select * from (${source}) as s(org_id, memory_id, doc_len, tfs) where s.tfs <> '{}'::jsonb`;

// A memory's {term: tf} as JSON text, written out directly: Object.fromEntries made each term a property key
// (interned in V8's string table), which was the most expensive line of a save in the API's profile.
export function tfsJson(terms: Map<string, number>): string {
  let json = '';
  for (const [term, tf] of terms) json += `${json ? ',' : '{'}${JSON.stringify(term)}:${tf}`;
  return json ? `${json}}` : '{}';
}

// Stages one memory's postings in the caller's transaction; returns the analyzed length (BM25's document length).
export async function indexContent(em: EntityManager, orgId: string, memoryId: string, content: string): Promise<number> {
  const analyzed = termFrequencies(content);
  await query(em, stageSql(sql`select ${orgId}::uuid, ${memoryId}::uuid, ${analyzed.length}::int, ${tfsJson(analyzed.terms)}::jsonb`));
  return analyzed.length;
}

// Makes memories unsearchable, in the caller's transaction, which holds their rows locked: a staged row goes,
// and a folded memory's document number becomes a tombstone, which searches skip until the blocks are rewritten.
export async function unindexMemories(em: EntityManager, orgId: string, memoryIds: string[]): Promise<void> {
  if (memoryIds.length === 0) return;
  await query(
    em,
    sql`with staged as (delete from lexical_staged where org_id = ${orgId} and memory_id = any(${memoryIds}::uuid[])),
      folded as (delete from lexical_docs where org_id = ${orgId} and memory_id = any(${memoryIds}::uuid[]) returning docnum)
      insert into lexical_tombstones (org_id, docnum) select ${orgId}, docnum from folded`,
  );
}

// Where a folded memory's document stands: its namespace (the namespace's BM25 statistics count it) and its scopes
// (a search filtered to one reads their documents from the index alone: lexical.ts).
export interface DocumentPlace {
  namespace_id: string;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
}

// A move to another namespace or a change of scopes updates the document in the caller's transaction, which holds
// the memory's row locked. A staged memory takes the place it has when it is folded.
export async function moveIndexedMemory(em: EntityManager, orgId: string, memoryId: string, place: DocumentPlace): Promise<void> {
  await query(
    em,
    sql`update lexical_docs set namespace_id = ${place.namespace_id}, user_id = ${place.user_id}, agent_id = ${place.agent_id},
        run_id = ${place.run_id}
         where org_id = ${orgId} and memory_id = ${memoryId}`,
  );
}
