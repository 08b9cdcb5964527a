import type { EntityManager } from '@mikro-orm/postgresql';
import type { CompiledFilters } from '../memories/filters.ts';
import { query, sql } from '../sql.ts';
import type { Ranked } from './fusion.ts';

// pgvector's text form of a vector, as a bound parameter cast with ::vector.
export const vectorLiteral = (v: Float32Array): string => `[${v.join(',')}]`;

// The best `n` memories of the org by cosine similarity to `vector`, best first, with every filter applied.
// One HNSW index serves all orgs, so the org and the filters are applied after the index scan: with
// iterative scans (pgvector 0.8) the scan goes on past ef_search candidates until n rows pass them, in
// relaxed order (re-sorted here). When the index still yields fewer than n, because the org's rows are too
// sparse in it or fewer than n exist, an exact scan of the org's own rows decides, so k rows come back
// whenever k exist.
export async function semanticRanking(em: EntityManager, orgId: string, vector: Float32Array, model: string, n: number, compiled: CompiledFilters): Promise<Ranked[]> {
  const q = vectorLiteral(vector);
  const candidates = (exact: boolean) => sql<{ id: string; distance: number | string }>`
    select e.memory_id as id, e.embedding <=> ${q}::vector as distance
      from memory_embeddings e join memories m on m.org_id = e.org_id and m.id = e.memory_id
     where e.org_id = ${orgId} and e.model = ${model} and ${compiled.where}
     order by ${exact ? sql`(e.embedding <=> ${q}::vector) + 0` : sql`e.embedding <=> ${q}::vector`} limit ${n}`;
  const rows = await em.transactional(async (tx) => {
    await query(tx, sql`select set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', ${String(Math.max(40, n))}, true)`);
    const approximate = await query(tx, candidates(false));
    return approximate.length >= n ? approximate : query(tx, candidates(true));
  });
  return rows
    .map((r) => ({ id: r.id, score: 1 - Number(r.distance) }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
