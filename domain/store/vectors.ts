import type { EntityManager } from '@mikro-orm/postgresql';
import { counterValue } from '../counters.ts';
import { query, queryOne, sql } from '../sql.ts';
import { ORG_COUNTERS } from './counters.ts';

// The memories' vectors (memory_embeddings) as the write path and search both see them.

// pgvector's text form of a vector, as a bound parameter cast with ::vector.
export const vectorLiteral = (v: Float32Array): string => `[${v.join(',')}]`;
// And back: pgvector's text form of a vector, parsed.
export const parseVector = (text: string): Float32Array => Float32Array.from(JSON.parse(text) as number[]);

// In the transaction of an edit of the content or of a delete: the old vector goes with the old text.
export async function forgetEmbeddings(em: EntityManager, orgId: string, ids: string[]): Promise<void> {
  if (ids.length > 0) await query(em, sql`delete from memory_embeddings where org_id = ${orgId} and memory_id = any(${ids}::uuid[])`);
}

// The counter of an org's vectors of `model`, kept by the trigger of migrations/0018 (which spells it in SQL).
export const vectorCounter = (model: string): string => `vectors:${model}`;

export interface EmbeddingStatus {
  model: string | null;
  // Memories of the org (superseded ones left out, as search leaves them out) and how many have a vector of the current model.
  total: number;
  embedded: number;
}

// How far the org's embedding has come: read by GET /api/memories/embeddings and by every search by meaning
// (fresh.ts).
export async function embeddingStatus(em: EntityManager, orgId: string, model: string | null): Promise<EmbeddingStatus> {
  // The org's vectors of the model come from its counters (kept by a trigger, migrations/0018), less those of its
  // superseded memories (few, found through their own index): no count grows with the org.
  const row = await queryOne(
    em,
    sql<{ total: string; embedded: string }>`select
        ${counterValue(orgId, orgId, ORG_COUNTERS.live)} as total,
        ${counterValue(orgId, orgId, vectorCounter(model ?? ''))}
          - (select count(*) from memories m join memory_embeddings e on e.org_id = m.org_id and e.memory_id = m.id
              where m.org_id = ${orgId} and m.superseded_by is not null and e.passage = 0 and e.model = ${model ?? ''}) as embedded`,
  );
  return { model, total: Number(row?.total ?? 0), embedded: Number(row?.embedded ?? 0) };
}
