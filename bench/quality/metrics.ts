import type { Qrels } from './collections.ts';

// Rankings are lists of document ids, best first. A document listed twice counts at its first position only,
// so a buggy ranking cannot earn its gain twice.
function distinct(ranking: readonly string[], depth: number): string[] {
  const seen = new Set<string>();
  for (const id of ranking) {
    if (seen.size >= depth) break;
    seen.add(id);
  }
  return [...seen];
}

/** nDCG@k with linear gains and the log2(rank + 1) discount; the ideal ranking orders every judged gain. */
export function ndcgAt(ranking: readonly string[], judgments: ReadonlyMap<string, number>, k = 10): number {
  const dcg = (gains: number[]): number => gains.reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
  const ideal = dcg(
    [...judgments.values()]
      .filter((g) => g > 0)
      .sort((a, b) => b - a)
      .slice(0, k),
  );
  if (ideal === 0) return 0;
  return dcg(distinct(ranking, k).map((id) => Math.max(0, judgments.get(id) ?? 0))) / ideal;
}

/** Share of the relevant documents (gain > 0) found in the first k. */
export function recallAt(ranking: readonly string[], judgments: ReadonlyMap<string, number>, k = 100): number {
  const relevant = [...judgments.values()].filter((g) => g > 0).length;
  if (relevant === 0) return 0;
  return distinct(ranking, k).filter((id) => (judgments.get(id) ?? 0) > 0).length / relevant;
}

/** Average precision over the whole ranking given; relevant documents never retrieved contribute zero. */
export function averagePrecision(ranking: readonly string[], judgments: ReadonlyMap<string, number>): number {
  const relevant = [...judgments.values()].filter((g) => g > 0).length;
  if (relevant === 0) return 0;
  let hits = 0;
  let sum = 0;
  distinct(ranking, Infinity).forEach((id, i) => {
    if ((judgments.get(id) ?? 0) > 0) sum += ++hits / (i + 1);
  });
  return sum / relevant;
}

export interface Evaluation {
  /** Queries with at least one relevant judgment: the only ones averaged. */
  queries: number;
  ndcg10: number;
  recall100: number;
  map: number;
}

/** Means over the judged queries; a judged query missing from `rankings` scores zero rather than being skipped. */
export function evaluate(rankings: ReadonlyMap<string, readonly string[]>, qrels: Qrels): Evaluation {
  let queries = 0;
  const total = { ndcg10: 0, recall100: 0, map: 0 };
  for (const [query, judgments] of qrels) {
    if (![...judgments.values()].some((g) => g > 0)) continue;
    const ranking = rankings.get(query) ?? [];
    queries++;
    total.ndcg10 += ndcgAt(ranking, judgments, 10);
    total.recall100 += recallAt(ranking, judgments, 100);
    total.map += averagePrecision(ranking, judgments);
  }
  const mean = (x: number): number => (queries === 0 ? 0 : x / queries);
  return { queries, ndcg10: mean(total.ndcg10), recall100: mean(total.recall100), map: mean(total.map) };
}
