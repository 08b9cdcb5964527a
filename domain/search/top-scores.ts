import { kthLargest } from './best-first.ts';
import type { Postings } from './blocks.ts';
import { prepare, ROOM, scoreBest, termBound, trimBuffers, type IndexRead, type Scored, type Term } from './scoring.ts';

// The best n of a search: MaxScore document at a time (maxScore), which skips most postings of common words, for a few
// terms, and every posting scored (scoring.ts, scoreBest) past MAX_CURSORS of them, where a cursor per term costs more
// than it saves.
export function scoreTop(index: IndexRead, counts: [string, number][], n: number): Scored {
  const held = counts.filter(([term]) => index.blocks.has(term) || index.staged.has(term)).length;
  return held > MAX_CURSORS ? scoreBest(index, counts, n) : maxScore(index, counts, n);
}

// A superset of the best n documents (every tie of the n-th included), each with its exact score, found by
// MaxScore (Turtle and Flood, 1995) document at a time. Each term's bound is its weight times its blocks' best
// score (blocks.ts, peaks). Documents are visited in ascending order through one cursor per term, scored whole,
// and kept while they reach the n-th best score so far. As that score rises, the terms of smallest bounds whose
// bounds add up to less than it stop leading the walk: a document found only in them cannot be among the best,
// so they are only looked up (a forward seek) for documents the other terms make promising. On queries mixing
// rare and common words, most of the common words' postings are skipped. Cursors read postings in order, so
// memory is read sequentially; an accumulator per document (scoreAll) would be read at random.
export function maxScore(index: IndexRead, counts: [string, number][], n: number): Scored {
  const { terms, c0, c1, dead, anyDead, done, ceiling, weights } = prepare(index, counts);
  const cursors = terms.map((t, i) => new Cursor(t, i, c0, c1)).sort((a, b) => a.bound - b.bound);
  const m = cursors.length;
  // below[i]: the most the terms before i (the smaller bounds) can add to a document's score.
  const below = new Float64Array(m + 1);
  for (let i = 0; i < m; i++) below[i + 1] = below[i]! + cursors[i]!.bound;
  const pool = new Pool(n);
  // A document's score from each term, by the term's place in the query: the sum is taken in that order, as
  // scoreAll takes it, so that equal scores are equal to the last bit and their ties go by id.
  const parts = new Float64Array(m);
  // cursors[0, lead) are only looked up; the others lead the walk.
  let lead = 0;
  for (;;) {
    let doc = NO_DOC;
    for (let i = lead; i < m; i++) doc = Math.min(doc, cursors[i]!.doc);
    if (doc === NO_DOC) break;
    let partial = 0;
    for (let i = lead; i < m; i++) {
      const c = cursors[i]!;
      if (c.doc === doc) {
        partial += parts[c.place] = c.score();
        c.next();
      }
    }
    let reachable = !(anyDead && doc < index.base && dead[doc] === 1);
    for (let i = lead - 1; i >= 0 && reachable; i--) {
      reachable = partial + below[i + 1]! >= pool.threshold;
      const c = cursors[i]!;
      if (reachable && c.seek(doc) === doc) partial += parts[c.place] = c.score();
    }
    let score = 0;
    for (let i = 0; i < m; i++) {
      score += parts[i]!;
      parts[i] = 0;
    }
    if (reachable && score >= pool.threshold && pool.add(doc, score)) {
      while (lead < m && below[lead + 1]! < pool.threshold) lead += 1;
    }
  }
  done();
  trimBuffers();
  return { ...pool.result(), ceiling, weights };
}

const NO_DOC = 0x7fffffff;
// Each document visited costs a step of every cursor: past this many terms, term at a time is cheaper
// (bench/lexical-scoring.ts).
export const MAX_CURSORS = 8;

// One term's postings in document order: its blocks, then its staged postings (whose keys come after every
// document number).
class Cursor {
  readonly bound: number;
  // The term's place among the query's terms.
  readonly place: number;
  readonly #weight: number;
  readonly #c0: number;
  readonly #c1: number;
  readonly #lists: Postings[];
  #list = 0;
  #at = 0;
  #docnums: Int32Array;
  doc: number;

  constructor(term: Term, place: number, c0: number, c1: number) {
    this.place = place;
    this.bound = termBound(term, c0, c1);
    const staged = [...term.staged].sort((a, b) => a.key - b.key);
    this.#weight = term.weight;
    this.#c0 = c0;
    this.#c1 = c1;
    this.#lists = term.blocks.map((b) => b.postings);
    if (staged.length > 0) {
      this.#lists.push({
        docnums: Int32Array.from(staged, (p) => p.key),
        lens: Uint32Array.from(staged, (p) => p.len),
        tfs: Uint32Array.from(staged, (p) => p.tf),
      });
    }
    this.#docnums = this.#lists[0]?.docnums ?? new Int32Array(0);
    this.doc = this.#docnums.length > 0 ? this.#docnums[0]! : NO_DOC;
  }

  score(): number {
    const { lens, tfs } = this.#lists[this.#list]!;
    const tf = tfs[this.#at]!;
    return (this.#weight * tf) / (tf + this.#c0 + this.#c1 * lens[this.#at]!);
  }

  next(): void {
    if (++this.#at < this.#docnums.length) {
      this.doc = this.#docnums[this.#at]!;
      return;
    }
    this.#enter(this.#list + 1);
  }

  // Moves to the first posting at or after `target`; returns its document.
  seek(target: number): number {
    if (this.doc >= target) return this.doc;
    let list = this.#list;
    while (list < this.#lists.length && this.#lists[list]!.docnums.at(-1)! < target) list += 1;
    if (list !== this.#list) this.#enter(list);
    if (this.doc >= target) return this.doc;
    // Galloping from the current posting, then a binary search in the last step's range.
    const docnums = this.#docnums;
    let lo = this.#at;
    let step = 1;
    while (lo + step < docnums.length && docnums[lo + step]! < target) {
      lo += step;
      step *= 2;
    }
    let hi = Math.min(lo + step, docnums.length - 1);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (docnums[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    this.#at = lo;
    this.doc = docnums[lo]!;
    return this.doc;
  }

  #enter(list: number): void {
    this.#list = list;
    this.#at = 0;
    if (list < this.#lists.length) {
      this.#docnums = this.#lists[list]!.docnums;
      this.doc = this.#docnums[0]!;
    } else this.doc = NO_DOC;
  }
}

// The documents that may be among the best n, with their scores. `threshold` is the n-th best score seen so far
// (less a little room): a document below it cannot be among the best n. The pool is cut back to the documents at
// or above it whenever it doubles.
class Pool {
  threshold = -Infinity;
  readonly #n: number;
  #docs: Int32Array;
  #scores: Float64Array;
  #size = 0;
  #limit: number;

  constructor(n: number) {
    this.#n = n;
    this.#limit = Math.max(2 * n, 64);
    this.#docs = new Int32Array(this.#limit);
    this.#scores = new Float64Array(this.#limit);
  }

  // Adds a document; says whether the threshold rose.
  add(doc: number, score: number): boolean {
    this.#docs[this.#size] = doc;
    this.#scores[this.#size++] = score;
    if (this.#size === this.#n || this.#size === this.#limit) return this.#cut();
    return false;
  }

  #cut(): boolean {
    const before = this.threshold;
    this.threshold = Math.max(before, kthLargest(this.#scores.slice(0, this.#size), this.#n) * (1 - ROOM));
    let kept = 0;
    for (let i = 0; i < this.#size; i++) {
      if (this.#scores[i]! < this.threshold) continue;
      this.#docs[kept] = this.#docs[i]!;
      this.#scores[kept++] = this.#scores[i]!;
    }
    this.#size = kept;
    // Ties of the n-th best can fill the pool: it grows instead.
    if (kept > this.#limit / 2) {
      this.#limit *= 2;
      const docs = new Int32Array(this.#limit);
      docs.set(this.#docs.subarray(0, kept));
      const scores = new Float64Array(this.#limit);
      scores.set(this.#scores.subarray(0, kept));
      this.#docs = docs;
      this.#scores = scores;
    }
    return this.threshold > before;
  }

  result(): Omit<Scored, 'ceiling' | 'weights'> {
    if (this.#size >= this.#n) this.#cut();
    return { keys: this.#docs.slice(0, this.#size), scores: this.#scores.slice(0, this.#size), pruned: this.threshold > -Infinity };
  }
}
