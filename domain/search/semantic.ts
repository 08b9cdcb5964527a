import type { EntityManager } from '@mikro-orm/postgresql';
import { readCounters } from '../counters.ts';
import { PASSAGE_CHARS, PASSAGE_HANDICAP, PASSAGE_OVERLAP, passagesOf, type Passage } from '../store/passages.ts';
import { NAMESPACE_COUNTERS, ORG_COUNTERS } from '../store/counters.ts';
import { memoryPasses, type CompiledFilters } from '../store/filters.ts';
import { query, queryOne, sql } from '../sql.ts';
import { byRank, type Ranked } from './fusion.ts';
import { HALFVEC, orgIndexReady } from '../store/vector-indexes.ts';
import { vectorCounter, vectorLiteral } from '../store/vectors.ts';
import type { ModelRelevance } from '../store/embedder.ts';

// A query's embedding, the model that made it, and that model's relevance curves when it has its own.
export interface QueryVector {
  vector: Float32Array;
  model: string;
  relevance?: ModelRelevance | undefined;
}

// The cosine distance of a row `e` of memory_embeddings to the query vector `q` (a vectorLiteral), a passage's
// counting PASSAGE_HANDICAP more.
const rowDistance = (q: string) =>
  sql`(e.embedding <=> ${q}::vector) + case when e.passage > 0 then ${PASSAGE_HANDICAP}::float8 else 0 end`;

// How the candidates are read: scored exactly (from the memories that pass the filters, or from all the org's
// vectors), or through the org's own HNSW index or the shared one.
export type SemanticScan = 'exact' | 'org' | 'own' | 'shared';

// The org's rows nearest to the query vector `q` (a vectorLiteral), best first: through an HNSW index, or exactly.
// The indexes order by the vectors at half precision, so the approximate scan names the same expression; every row
// is scored at full precision. It reads the org's own index when it has one (the org's id selects that partial
// index) and the shared one otherwise (`not own_index` selects it; domain/store/vector-indexes.ts). It checks
// each candidate's memory by its primary key (memoryPasses); the exact scan starts from the org's memories that
// pass the filters and reads each one's vectors by their key, keeping the nearest (a long memory has several:
// domain/store/passages.ts, whose distances count PASSAGE_HANDICAP more), so it yields each memory once and
// the index scan a long one perhaps more than once. (Grouping the rows costs less than taking each memory's
// nearest in its own subquery.) Neither shape depends on the statistics knowing the org.
// `org` scores every vector of the org in one range of the table's key, without a probe per memory, and checks
// only the nearest 2n memories against the filters: exact whenever n of them pass (the caller falls back to `exact`
// otherwise), and cheaper than `exact` for a small org searched whole, as it saves a probe per memory.
export function semanticCandidates(orgId: string, q: string, model: string, n: number, compiled: CompiledFilters, scan: SemanticScan) {
  if (scan === 'org') {
    return sql<{ id: string; distance: number | string }>`
      select c.memory_id as id, c.distance from (
        select e.org_id, e.memory_id, min(${rowDistance(q)}) as distance from memory_embeddings e
         where e.org_id = ${orgId} and e.model = ${model}
         group by e.org_id, e.memory_id order by 3 limit ${2 * n}) c
       where ${memoryPasses(compiled, 'c')}`;
  }
  if (scan === 'exact') {
    return sql<{ id: string; distance: number | string }>`
      select m.id, min(e.distance) as distance from memories m cross join lateral (
        select ${rowDistance(q)} as distance from memory_embeddings e
         where e.org_id = m.org_id and e.memory_id = m.id and e.model = ${model} offset 0) e
       where ${compiled.where}
       group by m.id order by 2 limit ${n}`;
  }
  // The scan's subquery depends on the settings' row, so they are set before the index scan starts (a one-time
  // filter on it in the plan); set_config's third argument keeps them to the statement's own transaction.
  return sql<{ id: string; distance: number | string }>`
    select c.id, c.distance
      from (select set_config('hnsw.iterative_scan', 'relaxed_order', true) as scan, set_config('hnsw.ef_search',
        ${String(efSearch(n))}, true) as ef) hnsw
     cross join lateral (
       select e.memory_id as id, ${rowDistance(q)} as distance from memory_embeddings e
        where hnsw.scan is not null and hnsw.ef is not null
          and e.org_id = ${orgId} and e.model = ${model} ${scan === 'own' ? sql`` : sql`and not e.own_index`}
            and ${memoryPasses(compiled, 'e')}
        order by e.embedding::${HALFVEC} <=> ${q}::${HALFVEC} limit ${n}) c`;
}

// pgvector's HNSW settings, which every index scan sets for itself (semanticCandidates), so that a search is one
// statement, needs no transaction, and keeps its settings behind a pooler that drops a session's. Iterative scans
// (pgvector 0.8): the scan goes on past ef_search candidates until the rows that pass the org and the filters fill
// the limit, in relaxed order (re-sorted here). ef_search, the candidates the graph search keeps, buys recall with
// time. In a large org of similar memories pgvector's default of 40 missed many answers an exact scan finds; 64
// wins back part of them at a small cost a search. A deeper list (hybrid's 100) reads ef_search = its depth: no slower
// than iterating from 40 and better at its top. EF_SEARCH_MAX bounds what a long memory's passages deepen it to;
// iteration goes on past it.
export const EF_SEARCH = 64;
const EF_SEARCH_MAX = 100;
export const efSearch = (n: number): number => Math.min(EF_SEARCH_MAX, Math.max(EF_SEARCH, n));

// Filters that leave few memories are scored exactly, without the index. The HNSW scan applies the filters only
// to what it yields, so it reads about n / share vectors to find n that pass (share: the org's memories that pass),
// up to pgvector's max_scan_tuples, each read several times dearer than scoring a memory exactly (found through the
// filter's indexes, its vector read by its key). The exact scan is the cheaper while passing² <= EXACT_OVER_INDEX × n
// × the org's memories, and it is exact. At least EXACT_SCAN_MAX are scored so: an org in the shared index shares
// the graph with other tenants, which makes the index scan dearer than the org's own numbers say
// (bench/semantic-at-scale.ts measures both ways).
const EXACT_SCAN_MAX = 2000;
const EXACT_OVER_INDEX = 6;
export const exactScanMax = (n: number, orgMemories: number): number =>
  Math.max(EXACT_SCAN_MAX, Math.floor(Math.sqrt(EXACT_OVER_INDEX * n * orgMemories)));

// Whether the best n of the memories that pass the filters are found by scoring each of them (exactScanMax), and
// the org's counters. Without filters, or with a namespace alone, the counters know how many pass; otherwise they
// are counted, stopping past the bound.
async function scoredExactly(
  em: EntityManager,
  orgId: string,
  compiled: CompiledFilters,
  n: number,
): Promise<{ exactly: boolean; counters: Map<string, number> }> {
  const inNamespace = compiled.trivial && compiled.namespaceId !== null;
  const [org, namespace] = await Promise.all([
    readCounters(em.fork(), orgId),
    inNamespace ? readCounters(em.fork(), orgId, compiled.namespaceId!) : null,
  ]);
  const total = org.get(ORG_COUNTERS.live) ?? 0;
  const limit = exactScanMax(n, total);
  if (compiled.trivial) return { exactly: (namespace ? (namespace.get(NAMESPACE_COUNTERS.live) ?? 0) : total) <= limit, counters: org };
  const row = await queryOne(
    em,
    sql<{ n: number }>`select count(*)::int as n from (select 1 from memories m where ${compiled.where} limit ${limit + 1}) passing`,
  );
  return { exactly: (row?.n ?? 0) <= limit, counters: org };
}

// An org without an index of its own is never searched through the shared index while scoring all its rows costs
// at most about as much as an index scan: there the scan reads about n / share rows, the share being the org's
// among every tenant's vectors, so its cost grows with the other tenants (and past pgvector's max_scan_tuples it
// ends in the exact scan anyway), whereas one range of the org's key costs the same whoever else is stored. Its
// rows are counted from above, a row per memory and one per PASSAGE_CHARS - PASSAGE_OVERLAP of stored bytes (a
// long memory's passages). At this bound an org of short memories reaches VECTOR_INDEX_ORG_MIN's default, where
// it gets an index of its own.
export const ORG_SCAN_ROWS = 20_000;
export const orgRowsAtMost = (memories: number, storedBytes: number): number =>
  memories + Math.ceil(storedBytes / (PASSAGE_CHARS - PASSAGE_OVERLAP));

// Which way a search reads its candidates first (semanticRanking): `exactly` says few enough memories pass the
// filters to score each, `wholeOrg` that no filter but the org's applies.
export function firstScan(o: { exactly: boolean; wholeOrg: boolean; ownIndex: boolean; orgRows: number }): SemanticScan {
  if (o.exactly && !o.wholeOrg) return 'exact';
  if (o.exactly || (!o.ownIndex && o.orgRows <= ORG_SCAN_ROWS)) return 'org';
  return o.ownIndex ? 'own' : 'shared';
}

// The best `n` memories of the org by cosine similarity to the query's vector, best first, with every filter
// applied (firstScan). When few memories pass the filters they are scored exactly (exactScanMax); they are counted
// while the query's vector is still being computed. A small org, or one searched whole with few memories, reads
// its vectors alone first (`org`) and checks the nearest 2n against the filters; should fewer than n pass (memories
// merged away, a narrow filter), the memories that pass are scored. Otherwise the org's own HNSW index serves them,
// or the one the other orgs share, and the filters (and, in the shared one, the org) are applied after the index
// scan, which goes on until n rows pass them (efSearch); a long memory's passages may fill several of those rows,
// and the scan is then made deeper, up to DEEPEN_MAX times n rows. When the index still yields fewer than n
// memories, because the org's rows are too sparse in it (vectors of an older model, say), an exact scan decides,
// so k rows come back whenever k exist.
export async function semanticRanking(
  em: EntityManager,
  orgId: string,
  vector: Promise<QueryVector>,
  n: number,
  compiled: CompiledFilters,
): Promise<Ranked[]> {
  const [{ exactly, counters }, ownIndex, { vector: v, model }] = await Promise.all([
    scoredExactly(em.fork(), orgId, compiled, n),
    orgIndexReady(em.fork(), orgId),
    vector,
  ]);
  const q = vectorLiteral(v);
  const exact = async () => nearestFirst(await query(em, semanticCandidates(orgId, q, model, n, compiled, 'exact')));
  const wholeOrg = compiled.trivial && compiled.namespaceId === null;
  const orgRows = orgRowsAtMost(counters.get(vectorCounter(model)) ?? 0, counters.get(ORG_COUNTERS.bytes) ?? 0);
  const scan = firstScan({ exactly, wholeOrg, ownIndex, orgRows });
  if (scan === 'exact') return exact();
  if (scan === 'org') {
    const nearest = nearestFirst(await query(em, semanticCandidates(orgId, q, model, n, compiled, 'org')));
    return nearest.length >= n ? nearest.slice(0, n) : exact();
  }
  const found = await indexRanking(em, orgId, q, model, n, compiled, scan);
  return found.length >= n ? found : exact();
}

// How much deeper than n rows an index scan goes to find n memories among long memories' passages.
const DEEPEN_MAX = 8;

// The best n memories through an HNSW index (fewer if the scan ends before), each by its nearest row: read n rows,
// then twice as many while passages of the same memories leave fewer than n, up to DEEPEN_MAX times n.
export async function indexRanking(
  em: EntityManager,
  orgId: string,
  q: string,
  model: string,
  n: number,
  compiled: CompiledFilters,
  scan: 'own' | 'shared',
): Promise<Ranked[]> {
  for (let rows = n; ; rows *= 2) {
    const read = await query(em, semanticCandidates(orgId, q, model, rows, compiled, scan));
    const found = nearestFirst(read);
    if (found.length >= n || read.length < rows || rows >= DEEPEN_MAX * n) return found.slice(0, n);
  }
}

// Each memory once, by its nearest row, best first (ties by id).
function nearestFirst(rows: { id: string; distance: number | string }[]): Ranked[] {
  const best = new Map<string, number>();
  for (const r of rows) best.set(r.id, Math.max(best.get(r.id) ?? -Infinity, 1 - Number(r.distance)));
  return [...best].map(([id, score]) => ({ id, score })).sort(byRank);
}

// Of memories found by meaning, those whose nearest vector to the query is one of their passages (handicap
// included, as the ranking counted it), with that passage and its number (1-based): where in a long memory the
// answer lies. One statement over the memories' own rows; a search whose hits are all short skips it.
export async function matchedPassages(
  em: EntityManager,
  orgId: string,
  { vector, model }: QueryVector,
  memories: { id: string; content: string }[],
): Promise<Map<string, { passage: Passage; number: number }>> {
  const rows = await query(
    em,
    sql<{ memory_id: string; passage: number }>`select distinct on (e.memory_id) e.memory_id, e.passage from memory_embeddings e
      where e.org_id = ${orgId} and e.memory_id = any(${memories.map((m) => m.id)}::uuid[]) and e.model = ${model}
      order by e.memory_id, ${rowDistance(vectorLiteral(vector))}`,
  );
  const contentOf = new Map(memories.map((m) => [m.id, m.content]));
  const matched = new Map<string, { passage: Passage; number: number }>();
  for (const r of rows) {
    const passage = r.passage > 0 ? passagesOf(contentOf.get(r.memory_id)!)[r.passage - 1] : undefined;
    if (passage) matched.set(r.memory_id, { passage, number: r.passage });
  }
  return matched;
}
