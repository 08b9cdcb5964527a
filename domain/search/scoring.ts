import { kthLargest } from './best-first.ts';
import type { Peaks, Postings } from './blocks.ts';
import { B, idf, K1 } from './bm25.ts';

// BM25 over what a search read of the org's index (lexical.ts), in this process: every posting scored into an
// accumulator per document (scoreAll), or only as many as it takes to know the best n exactly (scoreTop). The
// loops are written out (no callback per posting): they are the whole cost of a search of common words.

export interface IndexBlock {
  postings: Postings;
  peaks: Peaks;
}

export interface IndexRead {
  // Each term's blocks, in document order (blocks of one term never overlap).
  blocks: Map<string, IndexBlock[]>;
  staged: Map<string, { key: number; tf: number; len: number }[]>;
  // Keys of staged memories start at `base` (the org's next document number); stagedIds[key - base] is the id.
  base: number;
  stagedIds: string[];
  tombstones: Int32Array;
  n: number;
  total: number;
  // When set, only these documents are scored: a namespace's (lexical.ts), a superset of what the caller's
  // filter passes.
  scope?: Scope | undefined;
}

export interface Scope {
  // The scope's folded documents (none tombstoned), and the keys of its staged memories that hold any of the
  // query's terms.
  docnums: Int32Array;
  stagedKeys: Set<number>;
  // When set, BM25's statistics (N, the average length, each term's df) are the scope's instead of the org's:
  // its live memories and their total length.
  statistics: { n: number; total: number } | null;
}

// Documents (a document number, or base + i for the i-th staged memory) with their scores. `pruned`: only those
// that can be among the best n, so a caller that loses some of them (a memory deleted since) must score again.
export interface Scored {
  keys: Int32Array;
  scores: Float64Array;
  pruned: boolean;
  // The most any document could score for these terms (each term at its weight, df 0 included): what a hit's score
  // is measured against for its relevance (relevance.ts).
  ceiling: number;
  // Each query term's weight, qtf * idf * (k1 + 1), df 0 included (thread-terms.ts scores a thread by them).
  weights: Map<string, number>;
}

// Bounds are compared with this much room, so that a sum rounded differently never prunes a document that ties.
const ROOM = 1e-9;

// Scratch shared by every search of the process: scoring runs to its end without awaiting, so one search at a
// time uses it, and it leaves the accumulators and the dead marks zeroed.
const INITIAL_ENTRIES = 1 << 16;
let accumulator = new Float64Array(INITIAL_ENTRIES);
let deadMarks = new Uint8Array(INITIAL_ENTRIES);
let touched = new Int32Array(INITIAL_ENTRIES);

// The buffers grow with an org's largest document number (every content edit takes a new one) and its longest
// postings; past this many entries (52 MiB in all) they are let go after the search, so one org that needed them
// does not hold that memory for good, and an org that large pays for them each search.
export const BUFFER_KEEP_ENTRIES = 1 << 22;
function trimBuffers(): void {
  if (accumulator.length > BUFFER_KEEP_ENTRIES) accumulator = new Float64Array(INITIAL_ENTRIES);
  if (deadMarks.length > BUFFER_KEEP_ENTRIES) deadMarks = new Uint8Array(INITIAL_ENTRIES);
  if (touched.length > BUFFER_KEEP_ENTRIES) touched = new Int32Array(INITIAL_ENTRIES);
}

// What the buffers hold between searches (tests, and the process's memory at a glance).
export const scoringBufferBytes = (): number => accumulator.byteLength + deadMarks.byteLength + touched.byteLength;

interface Term {
  // qtf * idf * (k1 + 1): the term's score in a document is weight * tf / (tf + c0 + c1 * length).
  weight: number;
  blocks: IndexBlock[];
  staged: { key: number; tf: number; len: number }[];
}

// The query's terms that have live postings, with the tombstones (and, for a scope, every document outside it)
// marked dead; `done()` must be called when scoring ends.
function prepare(index: IndexRead, counts: [string, number][]) {
  if (deadMarks.length < index.base) deadMarks = new Uint8Array(Math.max(index.base, 2 * deadMarks.length));
  const dead = deadMarks;
  // Indexed loops over the typed arrays here and below: a for-of loop over one costs ten times more (a namespace
  // read whole can hold 100,000 documents).
  const { tombstones } = index;
  for (let i = 0; i < tombstones.length; i++) dead[tombstones[i]!] = 1;
  const { scope } = index;
  const blocksOf = (term: string) => index.blocks.get(term) ?? [];
  // Each term's staged postings that are scored: a scope's own, or all.
  const staged = new Map(
    counts.map(([term]) => [term, (index.staged.get(term) ?? []).filter((p) => !scope || scope.stagedKeys.has(p.key))]),
  );
  // df counts live postings only: first the org's, then, the marks turned to the scope's, its own.
  const dfs = new Map<string, number>();
  if (!scope?.statistics)
    for (const [term] of counts)
      dfs.set(term, (index.staged.get(term)?.length ?? 0) + live(blocksOf(term), dead, index.tombstones.length > 0));
  if (scope) {
    dead.fill(1, 0, index.base);
    const { docnums } = scope;
    for (let i = 0; i < docnums.length; i++) dead[docnums[i]!] = 0;
    // lexical_docs lists live documents only, so this changes nothing unless a tombstone's row was still read.
    for (let i = 0; i < tombstones.length; i++) dead[tombstones[i]!] = 1;
  }
  const anyDead = scope !== undefined || index.tombstones.length > 0;
  if (scope?.statistics) for (const [term] of counts) dfs.set(term, staged.get(term)!.length + live(blocksOf(term), dead, true));
  const { n, total } = scope?.statistics ?? index;
  const terms: Term[] = [];
  const weights = new Map<string, number>();
  let ceiling = 0;
  for (const [term, qtf] of counts) {
    const df = dfs.get(term)!;
    const weight = qtf * idf(n, df) * (K1 + 1);
    ceiling += weight;
    weights.set(term, weight);
    if (df > 0) terms.push({ weight, blocks: blocksOf(term), staged: staged.get(term)! });
  }
  const c0 = K1 * (1 - B);
  const c1 = n > 0 && total > 0 ? (K1 * B) / (total / n) : 0;
  const done = () => {
    if (scope) dead.fill(0, 0, index.base);
    else for (let i = 0; i < tombstones.length; i++) dead[tombstones[i]!] = 0;
  };
  return { terms, c0, c1, dead, anyDead, done, ceiling, weights };
}

// How many of the blocks' postings are not marked dead. An indexed loop summing the marks: half the time of a
// for-of loop over the document numbers (a long query counts half a million postings at 100,000 memories).
function live(blocks: IndexBlock[], dead: Uint8Array, anyDead: boolean): number {
  let count = 0;
  for (const { postings: p } of blocks) {
    const docnums = p.docnums;
    count += docnums.length;
    if (!anyDead) continue;
    for (let i = 0; i < docnums.length; i++) count -= dead[docnums[i]!]!;
  }
  return count;
}

// Every live posting of the query's terms scored: every document that has any, with its score.
export function scoreAll(index: IndexRead, counts: [string, number][]): Scored {
  const { terms, c0, c1, dead, anyDead, done, ceiling, weights } = prepare(index, counts);
  let postings = 0;
  for (const t of terms) {
    for (const b of t.blocks) postings += b.postings.docnums.length;
    postings += t.staged.length;
  }
  const documents = index.base + index.stagedIds.length;
  if (accumulator.length < documents) accumulator = new Float64Array(Math.max(documents, 2 * accumulator.length));
  if (touched.length < postings) touched = new Int32Array(Math.max(postings, 2 * touched.length));
  const acc = accumulator;
  const keys = touched;
  let count = 0;
  for (const { weight, blocks, staged } of terms) {
    for (const { postings } of blocks) {
      const { docnums, lens, tfs } = postings;
      for (let i = 0; i < docnums.length; i++) {
        const doc = docnums[i]!;
        if (anyDead && dead[doc] === 1) continue;
        const tf = tfs[i]!;
        const before = acc[doc]!;
        if (before === 0) keys[count++] = doc;
        acc[doc] = before + (weight * tf) / (tf + c0 + c1 * lens[i]!);
      }
    }
    count = addStaged(staged, weight, c0, c1, count);
  }
  done();
  const scored = { ...collect(keys.subarray(0, count)), pruned: false, ceiling, weights };
  trimBuffers();
  return scored;
}

function addStaged(staged: Term['staged'], weight: number, c0: number, c1: number, count: number): number {
  const acc = accumulator;
  for (const p of staged) {
    const before = acc[p.key]!;
    if (before === 0) touched[count++] = p.key;
    acc[p.key] = before + (weight * p.tf) / (p.tf + c0 + c1 * p.len);
  }
  return count;
}

// The given keys with their accumulated scores, every accumulator of the search zeroed.
function collect(keys: Int32Array): Pick<Scored, 'keys' | 'scores'> {
  const acc = accumulator;
  const scores = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) scores[i] = acc[keys[i]!]!;
  for (let i = 0; i < keys.length; i++) acc[keys[i]!] = 0;
  return { keys: keys.slice(), scores };
}

// A superset of the best n documents (every tie of the n-th included), each with its exact score, found by
// MaxScore (Turtle and Flood, 1995) document at a time. Each term's bound is its weight times its blocks' best
// score (blocks.ts, peaks). Documents are visited in ascending order through one cursor per term, scored whole,
// and kept while they reach the n-th best score so far. As that score rises, the terms of smallest bounds whose
// bounds add up to less than it stop leading the walk: a document found only in them cannot be among the best,
// so they are only looked up (a forward seek) for documents the other terms make promising. On queries mixing
// rare and common words, most of the common words' postings are skipped. Cursors read postings in order, so
// memory is read sequentially; an accumulator per document (scoreAll) would be read at random.
// Past MAX_CURSORS terms the org holds, every posting is scored instead.
export function scoreTop(index: IndexRead, counts: [string, number][], n: number): Scored {
  const held = counts.filter(([term]) => index.blocks.has(term) || index.staged.has(term)).length;
  return held > MAX_CURSORS ? scoreAll(index, counts) : maxScore(index, counts, n);
}

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
// Each document visited costs a step of every cursor: past this many terms, scoring every posting was cheaper
// (bench/lexical-scoring.ts).
const MAX_CURSORS = 8;

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
    let best = 0;
    for (const { peaks } of term.blocks) {
      for (let i = 0; i < peaks.tfs.length; i++) best = Math.max(best, peaks.tfs[i]! / (peaks.tfs[i]! + c0 + c1 * peaks.lens[i]!));
    }
    const staged = [...term.staged].sort((a, b) => a.key - b.key);
    for (const p of staged) best = Math.max(best, p.tf / (p.tf + c0 + c1 * p.len));
    this.bound = term.weight * best;
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
