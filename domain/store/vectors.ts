import type { EntityManager } from '@mikro-orm/postgresql';
import { query, sql } from '../sql.ts';

// The memories' vectors (memory_embeddings) as the write path and search both see them.

// pgvector's text form of a vector, as a bound parameter cast with ::vector.
export const vectorLiteral = (v: Float32Array): string => `[${v.join(',')}]`;
// And back: pgvector's text form of a vector, parsed.
export const parseVector = (text: string): Float32Array => Float32Array.from(JSON.parse(text) as number[]);

// In the transaction of an edit of the content or of a delete: the old vector goes with the old text.
export async function forgetEmbeddings(em: EntityManager, orgId: string, ids: string[]): Promise<void> {
  if (ids.length > 0) await query(em, sql`delete from memory_embeddings where org_id = ${orgId} and memory_id = any(${ids}::uuid[])`);
}
