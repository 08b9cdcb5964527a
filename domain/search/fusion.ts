// Hybrid search fuses the lexical and the semantic list by relative score fusion: each list's scores are
// scaled to [0, 1] between its worst and best hit (so BM25's unbounded scores and bge's compressed cosines
// become comparable), and a memory's fused score is the weighted sum over the lists, a list that did not find
// it adding 0. Chosen over reciprocal rank fusion because a poor list's long tail earns no rank credit, so what
// semantic search finds for questions in other words stays on top (measured by
// bench/quality/fusion-study.ts).

// The semantic list's weight; the lexical list gets 1 - SEMANTIC_WEIGHT. It finds most paraphrases and keeps
// Cranfield and CISI above issue 10's bar: less loses paraphrases to lexical noise, more falls below the bar.
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
