// Hybrid search fuses the lexical and the semantic list by relative score fusion: each list's scores are
// scaled to [0, 1] between its worst and best hit (so BM25's unbounded scores and bge's compressed cosines
// become comparable), and a memory's fused score is the weighted sum over the lists, a list that did not find
// it adding 0. Chosen by measurement (bench/quality/fusion-study.ts, docs/performance.md): against reciprocal
// rank fusion (k = 60, 100 deep) it keeps most of what semantic search alone finds for questions in other words
// (paraphrase recall@10 0.532 against 0.352; semantic alone 0.550) and ranks Cranfield and CISI better (nDCG@10
// 0.426 and 0.468 against 0.419 and 0.458), because a poor list's long tail no longer earns rank credit.

// The semantic list's weight; the lexical list gets 1 - SEMANTIC_WEIGHT. With the int8 model 0.6 measured best
// overall, offline and through the API (Cranfield 0.429, CISI 0.476, paraphrase recall 0.541): 0.5 ranks the
// collections alike but loses paraphrases to lexical noise (0.517 through the API); 0.65 and more find a few
// more paraphrases but fall below the prototype's 0.425 on Cranfield (0.423 through the API at 0.65).
export const SEMANTIC_WEIGHT = 0.6;

export type Retriever = 'lexical' | 'semantic';

export interface Ranked {
  id: string;
  score: number;
}

// Best first; ties by memory id, so that results are deterministic.
export const byRank = (a: Ranked, b: Ranked): number => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export interface Fused {
  id: string;
  score: number;
  foundBy: Retriever[];
}

const WEIGHTS: Record<Retriever, number> = { lexical: 1 - SEMANTIC_WEIGHT, semantic: SEMANTIC_WEIGHT };

// The fused top `k`, best first; ties are broken by memory id so results are deterministic. Each list is
// expected best first.
export function fuse(lists: Partial<Record<Retriever, Ranked[]>>, k: number): Fused[] {
  const byId = new Map<string, Fused>();
  for (const [retriever, list] of Object.entries(lists) as [Retriever, Ranked[]][]) {
    if (list.length === 0) continue;
    const best = list[0]!.score;
    const worst = list.at(-1)!.score;
    for (const hit of list) {
      // A list whose hits all score alike gives each of them full credit.
      const scaled = best > worst ? (hit.score - worst) / (best - worst) : 1;
      const entry = byId.get(hit.id) ?? { id: hit.id, score: 0, foundBy: [] };
      entry.score += WEIGHTS[retriever] * scaled;
      entry.foundBy.push(retriever);
      byId.set(hit.id, entry);
    }
  }
  return [...byId.values()].sort(byRank).slice(0, k);
}
