import { analyze, termFrequencies } from '../../domain/store/analyzer.ts';
import { idf, queryTermCounts, termScore } from '../../domain/search/bm25.ts';

export interface Hit {
  id: string;
  score: number;
}

// An in-memory BM25 index kept deliberately plain (postings in Maps, every matching posting scored) so it can
// serve as the oracle that the PostgreSQL search is compared against. Same rules as domain/search/bm25.ts.
export class Bm25Reference {
  readonly #lengths = new Map<string, number>();
  readonly #postings = new Map<string, Map<string, number>>();
  #totalLength = 0;

  /** Adding an id that is already indexed replaces its document, as editing a memory does. */
  add(id: string, text: string): void {
    this.remove(id);
    const { terms, length } = termFrequencies(text);
    this.#lengths.set(id, length);
    this.#totalLength += length;
    for (const [term, tf] of terms) {
      let posting = this.#postings.get(term);
      if (!posting) this.#postings.set(term, (posting = new Map()));
      posting.set(id, tf);
    }
  }

  remove(id: string): boolean {
    const length = this.#lengths.get(id);
    if (length === undefined) return false;
    this.#lengths.delete(id);
    this.#totalLength -= length;
    for (const [term, posting] of this.#postings) {
      if (posting.delete(id) && posting.size === 0) this.#postings.delete(term);
    }
    return true;
  }

  get size(): number {
    return this.#lengths.size;
  }

  get avgDocLen(): number {
    return this.#lengths.size === 0 ? 0 : this.#totalLength / this.#lengths.size;
  }

  /** Document frequency of an analyzed term (pass the stem, not the surface word). */
  df(term: string): number {
    return this.#postings.get(term)?.size ?? 0;
  }

  search(query: string, k: number): Hit[] {
    const N = this.#lengths.size;
    const avgDocLen = this.avgDocLen;
    const scores = new Map<string, number>();
    for (const [term, qtf] of queryTermCounts(analyze(query))) {
      const posting = this.#postings.get(term);
      if (!posting) continue;
      const w = idf(N, posting.size);
      for (const [id, tf] of posting) {
        scores.set(id, (scores.get(id) ?? 0) + qtf * termScore(tf, this.#lengths.get(id) ?? 0, avgDocLen, w));
      }
    }
    // Code-unit order, not localeCompare: it matches PostgreSQL's ORDER BY on ids under COLLATE "C" (and on uuid).
    return [...scores]
      .map(([id, score]) => ({ id, score }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, Math.max(0, k));
  }
}
