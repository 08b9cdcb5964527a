import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { query, sql } from '../sql.ts';
import { termFrequencies } from './analyzer.ts';

// Writes a memory's postings in the caller's transaction, so the memory is searchable the moment its
// write commits. Returns the analyzed length (the BM25 document length).
export async function indexContent(em: EntityManager, orgId: string, namespaceId: string, memoryId: string, content: string): Promise<number> {
  const analyzed = termFrequencies(content);
  if (analyzed.terms.size > 0) await query(em, postingsInsert(orgId, namespaceId, memoryId, analyzed));
  return analyzed.length;
}

// The postings of one analyzed memory as one INSERT (embeddable in a larger statement).
export function postingsInsert(orgId: string, namespaceId: string, memoryId: string, analyzed: { terms: Map<string, number>; length: number }): RawBuilder<unknown> {
  return sql`insert into memory_terms (org_id, term, memory_id, namespace_id, tf, doc_len)
    select ${orgId}, t, ${memoryId}, ${namespaceId}, f, ${analyzed.length} from unnest(${[...analyzed.terms.keys()]}::text[], ${[...analyzed.terms.values()]}::int[]) as u(t, f)`;
}

// A memory moved to another namespace keeps its postings; only their namespace changes.
export async function moveContent(em: EntityManager, orgId: string, namespaceId: string, memoryId: string, content: string): Promise<void> {
  const { terms } = termFrequencies(content);
  if (terms.size === 0) return;
  await query(em, sql`update memory_terms set namespace_id = ${namespaceId} where org_id = ${orgId} and term = any(${[...terms.keys()]}::text[]) and memory_id = ${memoryId}`);
}

// Removes exactly the postings `content` produced: the analyzer names every key, so no index by memory is needed.
export async function unindexContent(em: EntityManager, orgId: string, memoryId: string, content: string): Promise<void> {
  const { terms } = termFrequencies(content);
  if (terms.size === 0) return;
  await query(em, sql`delete from memory_terms where org_id = ${orgId} and term = any(${[...terms.keys()]}::text[]) and memory_id = ${memoryId}`);
}

// unindexContent for many memories in one statement (a batch of an erasure).
export async function unindexMemories(em: EntityManager, orgId: string, memories: { id: string; content: string }[]): Promise<void> {
  const terms: string[] = [];
  const owners: string[] = [];
  for (const memory of memories) {
    for (const term of termFrequencies(memory.content).terms.keys()) {
      terms.push(term);
      owners.push(memory.id);
    }
  }
  if (terms.length === 0) return;
  await query(em, sql`delete from memory_terms mt using unnest(${terms}::text[], ${owners}::uuid[]) as u(t, m) where mt.org_id = ${orgId} and mt.term = u.t and mt.memory_id = u.m`);
}
