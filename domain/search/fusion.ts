// Reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009): each list gives a memory 1 / (RRF_K + rank),
// rank counted from 1, and the fused score is the sum over the lists that found it. Only ranks count, so
// BM25 scores (unbounded) and cosine similarities (in [-1, 1]) need no calibration against each other.

// The paper's constant: large enough that the first few ranks of one list do not drown the other list.
export const RRF_K = 60;

export type Retriever = 'lexical' | 'semantic';

export interface Ranked {
  id: string;
  score: number;
}

export interface Fused {
  id: string;
  score: number;
  foundBy: Retriever[];
}

// The fused top `k`, best first; ties are broken by memory id so results are deterministic.
export function fuse(lists: Partial<Record<Retriever, Ranked[]>>, k: number): Fused[] {
  const byId = new Map<string, Fused>();
  for (const [retriever, list] of Object.entries(lists) as [Retriever, Ranked[]][]) {
    list.forEach((hit, i) => {
      const entry = byId.get(hit.id) ?? { id: hit.id, score: 0, foundBy: [] };
      entry.score += 1 / (RRF_K + i + 1);
      entry.foundBy.push(retriever);
      byId.set(hit.id, entry);
    });
  }
  return [...byId.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, k);
}
