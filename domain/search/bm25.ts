// BM25 with Lucene's formula and defaults. Two harmless departures from Lucene 8+: the classic (k1 + 1) factor
// is kept (it scales every score alike), and document lengths are exact rather than quantized to one byte.
//
// Rules the database search and the in-memory reference (test/support/bm25-reference.ts) both follow:
// - Query terms are NOT deduplicated: a term occurring qtf times in the analyzed query contributes
//   qtf * termScore, as Lucene's one SHOULD clause per occurrence does. It matters on long queries: on CISI
//   (whose queries are whole abstracts) nDCG@10 is 0.381 this way, matching Lucene, and 0.313 deduplicated;
//   on Cranfield 0.367 against 0.365 (bench/quality/run-reference.ts).
// - A document's score is the sum, over the distinct query terms it contains, of qtf * termScore; documents
//   with none are not results. Ties are broken by document id ascending (code-unit order).
// - N counts every document in the searched set, including those with no terms; avgDocLen is the total of
//   their lengths (tokens kept by the analyzer) divided by N.

export const K1 = 1.2;
export const B = 0.75;

/** Lucene's idf: always positive, unlike Robertson's original, so a very common term never lowers a score. */
export function idf(N: number, df: number): number {
  return Math.log(1 + (N - df + 0.5) / (df + 0.5));
}

export function termScore(tf: number, docLen: number, avgDocLen: number, idf: number): number {
  return (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * docLen) / avgDocLen));
}

/** Each distinct query term with its count (qtf), in first-occurrence order. */
export function queryTermCounts(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}
