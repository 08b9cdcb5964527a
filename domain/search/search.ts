import type { EntityManager } from '@mikro-orm/postgresql';
import { ORG_COUNTERS } from '../memories/counters.ts';
import { compileFilters, type MemoryFilters } from '../memories/filters.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow, type MemoryView } from '../memories/model.ts';
import { query, sql } from '../sql.ts';
import { analyze } from './analyzer.ts';
import { B, K1, queryTermCounts } from './bm25.ts';

// Distinct query terms beyond this are ignored: each costs an index scan of its postings.
export const MAX_QUERY_TERMS = 64;

export interface SearchHit extends MemoryView {
  score: number;
}

// Exact BM25 (Lucene's idf, k1 1.2, b 0.75, see bm25.ts) with statistics per org, computed in one statement
// from the postings: document frequencies come from the same index scan that reads the postings
// (a window count per term), N and the average length from the org's counters. Filters apply to the
// scored documents; without filters only the top k are joined to their rows.
export async function searchMemories(em: EntityManager, orgId: string, text: string, k: number, filters: MemoryFilters = {}): Promise<SearchHit[]> {
  const counts = [...queryTermCounts(analyze(text))].slice(0, MAX_QUERY_TERMS);
  if (counts.length === 0) return [];
  const compiled = await compileFilters(em, orgId, filters);
  if (!compiled.satisfiable) return [];
  const terms = counts.map(([t]) => t);
  const weights = counts.map(([, w]) => w);
  const scored = sql`
    with q as (select t, w from unnest(${terms}::text[], ${weights}::float8[]) as u(t, w)),
    stats as (
      select coalesce(sum(value) filter (where name = ${ORG_COUNTERS.live}), 0)::float8 as n,
             coalesce(sum(value) filter (where name = ${ORG_COUNTERS.docLen}), 0)::float8 as total
        from counters where scope_id = ${orgId} and name in (${ORG_COUNTERS.live}, ${ORG_COUNTERS.docLen})
    ),
    p as (
      select mt.memory_id, mt.tf, mt.doc_len, q.w, count(*) over (partition by mt.term) as df
        from memory_terms mt join q on q.t = mt.term
       where mt.org_id = ${orgId} and mt.term = any(${terms}::text[])
    ),
    scored as (
      select p.memory_id,
             sum(p.w * ln(1::float8 + (s.n - p.df + 0.5::float8) / (p.df + 0.5::float8))
                 * p.tf * ${K1 + 1}::float8
                 / (p.tf + ${K1}::float8 * (${1 - B}::float8 + ${B}::float8 * p.doc_len / (s.total / s.n)))) as score
        from p cross join stats s
       group by p.memory_id
    )`;
  const unfiltered = compiled.trivial && compiled.namespaceId === null;
  const rows = unfiltered
    ? await query(
        em,
        sql<MemoryRow>`${scored},
          top as (select memory_id, score from scored order by score desc, memory_id limit ${k})
          select ${MEMORY_COLUMNS}, top.score from top join memories m on m.id = top.memory_id join namespaces n on n.id = m.namespace_id
           where ${compiled.where} order by top.score desc, m.id`,
      )
    : await query(
        em,
        sql<MemoryRow>`${scored}
          select ${MEMORY_COLUMNS}, scored.score from scored join memories m on m.id = scored.memory_id join namespaces n on n.id = m.namespace_id
           where ${compiled.where} order by scored.score desc, m.id limit ${k}`,
      );
  return rows.map((r) => memoryView(r) as SearchHit);
}
