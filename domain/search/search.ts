import type { EntityManager } from '@mikro-orm/postgresql';
import { isLong, type Passage } from '../store/passages.ts';
import { compileFilters, type MemoryFilters } from '../store/filters.ts';
import { MEMORIES_IN_NAMESPACES, MEMORY_COLUMNS, memoryView, type MemoryRow, type MemoryView } from '../store/model.ts';
import { query, sql } from '../sql.ts';
import { analyze, QUESTION_STOP_WORDS } from '../store/analyzer.ts';
import { fuse, type Fused, type Ranked, type Retriever } from './fusion.ts';
import { HYBRID_LEXICAL_TERMS, lexicalRanking } from './lexical.ts';
import { withThreadContext } from './lexical-context.ts';
import { matchedPassages, semanticRanking, type QueryVector } from './semantic.ts';

// lexical: BM25 over the postings (the default); semantic: cosine similarity of embeddings; hybrid: both
// lists fused by relative score (fusion.ts), the lexical one without question words, from a long question's rarest
// terms, with a namespace's own statistics (lexical.ts) and with thread context (lexical-context.ts).
export const SEARCH_MODES = ['lexical', 'semantic', 'hybrid'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

// Hybrid fuses this many of each list (or k, if larger): deep enough that a memory ranked moderately by
// both retrievers can overtake one ranked first by only one of them.
export const FUSION_DEPTH = 100;

export interface SearchHit extends MemoryView {
  score: number;
  foundBy: Retriever[];
  // A long memory found by meaning through one of its passages: that passage (domain/store/passages.ts).
  matchedPassage?: Passage;
}

export interface SearchRequest {
  text: string;
  k: number;
  mode: SearchMode;
  filters?: MemoryFilters | undefined;
}

export const needsVector = (mode: SearchMode): boolean => mode !== 'lexical';

// One search in any mode. `vector` is the query's embedding, still being computed for semantic and hybrid
// (so the lexical list is fetched meanwhile), and undefined for lexical.
export async function searchMemories(em: EntityManager, orgId: string, request: SearchRequest, vector?: Promise<QueryVector>): Promise<SearchHit[]> {
  // Its failure is handled where it is awaited; until then, it must not count as an unhandled rejection.
  vector?.catch(() => undefined);
  const compiled = await compileFilters(em, orgId, request.filters ?? {});
  if (!compiled.satisfiable) return [];
  const { text, k, mode } = request;
  const semantic = (n: number) => {
    if (!vector) throw new Error(`a ${mode} search needs the query vector`);
    return semanticRanking(em.fork(), orgId, vector, n, compiled);
  };
  const only = (retriever: Retriever, list: Ranked[]): Fused[] => list.map((r) => ({ ...r, foundBy: [retriever] }));
  let ranked: Fused[];
  if (mode === 'lexical') ranked = only('lexical', await lexicalRanking(em, orgId, analyze(text), k, compiled));
  else if (mode === 'semantic') ranked = only('semantic', await semantic(k));
  else {
    const depth = Math.max(k, FUSION_DEPTH);
    const lexical = async () =>
      withThreadContext(em, orgId, await lexicalRanking(em, orgId, analyze(text, QUESTION_STOP_WORDS), depth, compiled, { statistics: 'namespace', rarest: HYBRID_LEXICAL_TERMS }), depth, compiled);
    const [words, similar] = await Promise.all([lexical(), semantic(depth)]);
    ranked = fuse({ lexical: words, semantic: similar }, k);
  }
  const hits = await withRows(em, orgId, ranked);
  const long = hits.filter((h) => h.foundBy.includes('semantic') && isLong(h.content));
  if (long.length === 0 || !vector) return hits;
  const matched = await matchedPassages(em, orgId, await vector, long);
  return hits.map((h) => (matched.has(h.id) ? { ...h, matchedPassage: matched.get(h.id)! } : h));
}

// The memory rows of ranked ids, in rank order, each with its score and the lists that found it.
async function withRows(em: EntityManager, orgId: string, ranked: Fused[]): Promise<SearchHit[]> {
  if (ranked.length === 0) return [];
  const rows = await query(
    em,
    sql<MemoryRow>`select ${MEMORY_COLUMNS} from ${MEMORIES_IN_NAMESPACES}
      where m.org_id = ${orgId} and m.id = any(${ranked.map((r) => r.id)}::uuid[])`,
  );
  const byId = new Map(rows.map((r) => [r.id, memoryView(r)]));
  return ranked.flatMap((r) => {
    const memory = byId.get(r.id);
    return memory ? [{ ...memory, score: r.score, foundBy: r.foundBy }] : [];
  });
}
