import { kthLargest } from './best-first.ts';
import type { Peaks, Postings } from './blocks.ts';
import { B, idf, K1 } from './bm25.ts';

// BM25 over what a search read of the org's index (lexical.ts), in this process, into an accumulator per document:
// every posting, every document that has one handed out (scoreAll) or only the best n (scoreBest; top-scores.ts
// chooses it or MaxScore document at a time). The loops are written out (no callback per posting): they are the whole
// cost of a search of common words.

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
export const ROOM = 1e-9;

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
export function trimBuffers(): void {
  if (accumulator.length > BUFFER_KEEP_ENTRIES) accumulator = new Float64Array(INITIAL_ENTRIES);
  if (deadMarks.length > BUFFER_KEEP_ENTRIES) deadMarks = new Uint8Array(INITIAL_ENTRIES);
  if (touched.length > BUFFER_KEEP_ENTRIES) touched = new Int32Array(INITIAL_ENTRIES);
}

// What the buffers hold between searches (tests, and the process's memory at a glance).
export const scoringBufferBytes = (): number => accumulator.byteLength + deadMarks.byteLength + touched.byteLength;

export interface Term {
  // qtf * idf * (k1 + 1): the term's score in a document is weight * tf / (tf + c0 + c1 * length).
  weight: number;
  blocks: IndexBlock[];
  staged: { key: number; tf: number; len: number }[];
}

// The query's terms that have live postings, with the tombstones (and, for a scope, every document outside it)
// marked dead; `done()` must be called when scoring ends.
export function prepare(index: IndexRead, counts: [string, number][]) {
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
  reserve(index, terms);
  const sum = { count: 0 };
  for (const term of terms) accumulate(term, c0, c1, dead, anyDead, sum);
  done();
  const scored = { ...collect(touched.subarray(0, sum.count)), pruned: false, ceiling, weights };
  trimBuffers();
  return scored;
}

// The accumulators and the list of documents touched, large enough for a search of these terms.
function reserve(index: IndexRead, terms: Term[]): void {
  let postings = 0;
  for (const t of terms) {
    for (const b of t.blocks) postings += b.postings.docnums.length;
    postings += t.staged.length;
  }
  const documents = index.base + index.stagedIds.length;
  if (accumulator.length < documents) accumulator = new Float64Array(Math.max(documents, 2 * accumulator.length));
  if (touched.length < postings) touched = new Int32Array(Math.max(postings, 2 * touched.length));
}

// One term's live postings added to their documents' accumulators; `sum` counts the documents touched.
function accumulate(
  { weight, blocks, staged }: Term,
  c0: number,
  c1: number,
  dead: Uint8Array,
  anyDead: boolean,
  sum: { count: number },
): void {
  const acc = accumulator;
  const keys = touched;
  let { count } = sum;
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
  for (const p of staged) {
    const before = acc[p.key]!;
    if (before === 0) keys[count++] = p.key;
    acc[p.key] = before + (weight * p.tf) / (p.tf + c0 + c1 * p.len);
  }
  sum.count = count;
}

// The most a term can add to one document's score: its weight times the best of its blocks' peaks and staged postings.
export function termBound(term: Term, c0: number, c1: number): number {
  let best = 0;
  for (const { peaks } of term.blocks) {
    for (let i = 0; i < peaks.tfs.length; i++) best = Math.max(best, peaks.tfs[i]! / (peaks.tfs[i]! + c0 + c1 * peaks.lens[i]!));
  }
  for (const p of term.staged) best = Math.max(best, p.tf / (p.tf + c0 + c1 * p.len));
  return term.weight * best;
}

// Every live posting scored, as scoreAll scores them, but only the documents scoring at least the n-th best kept
// (ties included): a search that wants the best n of many terms hands out a few documents instead of a copy of every
// score.
export function scoreBest(index: IndexRead, counts: [string, number][], n: number): Scored {
  const { terms, c0, c1, dead, anyDead, done, ceiling, weights } = prepare(index, counts);
  reserve(index, terms);
  const sum = { count: 0 };
  for (const term of terms) accumulate(term, c0, c1, dead, anyDead, sum);
  done();
  const seen = touched.subarray(0, sum.count);
  const threshold = seen.length > n ? nthBest(seen, n) : -Infinity;
  let kept = 0;
  let keys = new Int32Array(Math.min(seen.length, 2 * n + 64));
  let scores = new Float64Array(keys.length);
  for (let i = 0; i < seen.length; i++) {
    const score = accumulator[seen[i]!]!;
    accumulator[seen[i]!] = 0;
    if (score < threshold) continue;
    // Ties of the n-th best can outnumber the room made for them.
    if (kept === keys.length) [keys, scores] = grown(keys, scores);
    keys[kept] = seen[i]!;
    scores[kept++] = score;
  }
  trimBuffers();
  return { keys: keys.subarray(0, kept), scores: scores.subarray(0, kept), pruned: kept < seen.length, ceiling, weights };
}

function grown(keys: Int32Array, scores: Float64Array): [Int32Array<ArrayBuffer>, Float64Array<ArrayBuffer>] {
  const k = new Int32Array(2 * keys.length);
  k.set(keys);
  const s = new Float64Array(2 * scores.length);
  s.set(scores);
  return [k, s];
}

// The n-th best score of these documents' accumulators: a heap of the best n for a few, quickselect on a copy past
// HEAP_MOST (a heap of n costs log n a document that enters it).
const HEAP_MOST = 1024;
function nthBest(keys: Int32Array, n: number): number {
  const acc = accumulator;
  if (n > HEAP_MOST) {
    const values = new Float64Array(keys.length);
    for (let i = 0; i < keys.length; i++) values[i] = acc[keys[i]!]!;
    return kthLargest(values, n);
  }
  // A min-heap of the best n seen so far: its root is the n-th best.
  const heap = new Float64Array(n);
  for (let i = 0; i < n; i++) heap[i] = acc[keys[i]!]!;
  heap.sort();
  for (let i = n; i < keys.length; i++) {
    const value = acc[keys[i]!]!;
    if (value <= heap[0]!) continue;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= n) break;
      const child = left + 1 < n && heap[left + 1]! < heap[left]! ? left + 1 : left;
      if (heap[child]! >= value) break;
      heap[at] = heap[child]!;
      at = child;
    }
    heap[at] = value;
  }
  return heap[0]!;
}

// The given keys with their accumulated scores, every accumulator of the search zeroed.
function collect(keys: Int32Array): Pick<Scored, 'keys' | 'scores'> {
  const acc = accumulator;
  const scores = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) scores[i] = acc[keys[i]!]!;
  for (let i = 0; i < keys.length; i++) acc[keys[i]!] = 0;
  return { keys: keys.slice(), scores };
}
