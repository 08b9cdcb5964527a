import type { EntityManager } from '@mikro-orm/postgresql';
import { ORG_COUNTERS } from '../memories/counters.ts';
import type { CompiledFilters } from '../memories/filters.ts';
import { query, sql } from '../sql.ts';
import { analyze } from './analyzer.ts';
import { B, K1, queryTermCounts } from './bm25.ts';
import type { Ranked } from './fusion.ts';

// Distinct query terms beyond this are ignored: each costs an index scan of its postings.
export const MAX_QUERY_TERMS = 128;

// Exact BM25 (Lucene's idf, k1 1.2, b 0.75, see bm25.ts) with statistics per org, in one statement:
// - df per query term is an index-only count over the org's postings (org-wide even when filtering),
//   materialized so the planner cannot re-run the count per posting;
// - N and the average length come from the org's sharded counters;
// - the scoring scan reads only postings (tf, length and namespace are stored in them), so a namespace
//   filter costs nothing extra; other filters join the scored memories to their rows.
// Returns the best `n` memory ids with their BM25 scores, best first (ties by id).
export async function lexicalRanking(em: EntityManager, orgId: string, text: string, n: number, compiled: CompiledFilters): Promise<Ranked[]> {
  const counts = [...queryTermCounts(analyze(text))].slice(0, MAX_QUERY_TERMS);
  if (counts.length === 0) return [];
  const terms = counts.map(([t]) => t);
  const weights = counts.map(([, w]) => w);
  const inNamespace = compiled.namespaceId ? sql`and mt.namespace_id = ${compiled.namespaceId}` : sql``;
  const scored = sql`
    with q as (select t, w from unnest(${terms}::text[], ${weights}::float8[]) as u(t, w)),
    stats as materialized (
      select coalesce(sum(value) filter (where name = ${ORG_COUNTERS.live}), 0)::float8 as n,
             coalesce(sum(value) filter (where name = ${ORG_COUNTERS.docLen}), 0)::float8 as total
        from counters where org_id = ${orgId} and scope_id = ${orgId} and name in (${ORG_COUNTERS.live}, ${ORG_COUNTERS.docLen})
    ),
    df as materialized (
      select q.t, q.w, (select count(*) from memory_terms c where c.org_id = ${orgId} and c.term = q.t)::float8 as df from q
    ),
    -- Everything constant per term (idf, query weight, k1 + 1) or per query (the length normalisation's
    -- factors) is computed once here, so each posting costs a multiply-add and a division. An org with no
    -- indexed text has no postings to score; the nullifs only keep its statistics from dividing by zero.
    terms as materialized (
      select df.t, df.w * ln(1::float8 + (s.n - df.df + 0.5::float8) / (df.df + 0.5::float8)) * ${K1 + 1}::float8 as weight,
             ${K1 * (1 - B)}::float8 as c0, ${K1 * B}::float8 / nullif(s.total / nullif(s.n, 0), 0) as c1
        from df cross join stats s
    ),
    scored as (
      select mt.memory_id, sum(tw.weight * mt.tf / (mt.tf + tw.c0 + tw.c1 * mt.doc_len)) as score
        from terms tw join memory_terms mt on mt.org_id = ${orgId} and mt.term = tw.t ${inNamespace}
       group by mt.memory_id
    )`;
  const rows = compiled.trivial
    ? await query(em, sql<RankRow>`${scored} select memory_id as id, score from scored order by score desc, memory_id limit ${n}`)
    : await query(
        em,
        sql<RankRow>`${scored}
          select scored.memory_id as id, scored.score from scored join memories m on m.org_id = ${orgId} and m.id = scored.memory_id
           where ${compiled.where} order by scored.score desc, m.id limit ${n}`,
      );
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
}

interface RankRow {
  id: string;
  score: number | string;
}
