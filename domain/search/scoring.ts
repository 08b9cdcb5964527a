import { kthLargest } from './best-first.ts';
import type { Peaks, Postings } from './blocks.ts';
import { B, idf, K1 } from './bm25.ts';

// BM25 over what a search read of the org's index (lexical.ts): every posting scored (scoreAll), or only as many
// as it takes to know the best n exactly (scoreTop). Both score in this process into typed-array accumulators;
// the loops are written out (no callback per posting): they are the whole cost of a search of common words.

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
}

// Documents (a document number, or base + i for the i-th staged memory) with their scores. `pruned`: only those
// that can be among the best n, so a caller that loses some of them (a memory deleted since) must score again.
export interface Scored {
  keys: Int32Array;
  scores: Float64Array;
  pruned: boolean;
}

// Bounds are compared with this much room, so that a sum rounded differently never prunes a document that ties.
const ROOM = 1e-9;

// Accumulators shared by every search of the process: scoring runs to its end without awaiting, so one search
// at a time uses them, and it leaves them zeroed.
let accumulator = new Float64Array(1 << 16);
let deadMarks = new Uint8Array(1 << 16);
let touched = new Int32Array(1 << 16);

interface Term {
  // qtf * idf * (k1 + 1): the term's score in a document is weight * tf / (tf + c0 + c1 * length).
  weight: number;
  blocks: IndexBlock[];
  staged: { key: number; tf: number; len: number }[];
}

// The query's terms that have live postings, with the accumulators sized and the tombstones marked dead;
// `done()` must be called when scoring ends.
function prepare(index: IndexRead, counts: [string, number][]) {
  let postings = 0;
  for (const [term] of counts) {
    for (const b of index.blocks.get(term) ?? []) postings += b.postings.docnums.length;
    postings += index.staged.get(term)?.length ?? 0;
  }
  const documents = index.base + index.stagedIds.length;
  if (accumulator.length < documents) {
    const length = Math.max(documents, 2 * accumulator.length);
    accumulator = new Float64Array(length);
    deadMarks = new Uint8Array(length);
  }
  if (touched.length < postings) touched = new Int32Array(Math.max(postings, 2 * touched.length));
  const dead = deadMarks;
  for (const d of index.tombstones) dead[d] = 1;
  const anyDead = index.tombstones.length > 0;
  const terms: Term[] = [];
  for (const [term, qtf] of counts) {
    const blocks = index.blocks.get(term) ?? [];
    const staged = index.staged.get(term) ?? [];
    // df counts live postings only.
    let df = staged.length;
    for (const { postings: p } of blocks) {
      if (!anyDead) df += p.docnums.length;
      else for (const d of p.docnums) df += 1 - dead[d]!;
    }
    if (df > 0) terms.push({ weight: qtf * idf(index.n, df) * (K1 + 1), blocks, staged });
  }
  const c0 = K1 * (1 - B);
  const c1 = index.n > 0 && index.total > 0 ? (K1 * B) / (index.total / index.n) : 0;
  const done = () => {
    for (const d of index.tombstones) dead[d] = 0;
  };
  return { terms, c0, c1, dead, anyDead, done };
}

// Every live posting of the query's terms scored: every document that has any, with its score.
export function scoreAll(index: IndexRead, counts: [string, number][]): Scored {
  const { terms, c0, c1, dead, anyDead, done } = prepare(index, counts);
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
  return collect(keys.subarray(0, count), false);
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
function collect(keys: Int32Array, pruned: boolean, zero: Int32Array = keys): Scored {
  const acc = accumulator;
  const scores = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) scores[i] = acc[keys[i]!]!;
  for (const k of zero) acc[k] = 0;
  return { keys: keys.slice(), scores, pruned };
}

// A superset of the best n documents (every tie of the n-th included), each with its exact score, found by
// MaxScore (Turtle and Flood, 1995) term at a time. Each term's bound is its weight times its blocks' best score
// (blocks.ts, peaks). Terms are scored whole from the highest bound down, while the bounds of the terms left add
// up to at least the n-th best score so far: until then a document found in none of the terms scored yet could
// still be among the best. From there no new document can, so the terms left are only looked up for the
// documents that can still reach the n-th best, which shrink as their scores fill in. On queries mixing rare and
// common words, the common words' postings (most of the work) are never scored whole.
export function scoreTop(index: IndexRead, counts: [string, number][], n: number): Scored {
  const { terms, c0, c1, dead, done } = prepare(index, counts);
  const acc = accumulator;
  const keys = touched;
  let count = 0;
  // Staged memories are few, and have no postings in blocks: their scores are complete at once.
  for (const t of terms) count = addStaged(t.staged, t.weight, c0, c1, count);
  const bound = (t: Term) => {
    let best = 0;
    for (const { peaks } of t.blocks) {
      for (let i = 0; i < peaks.tfs.length; i++) best = Math.max(best, peaks.tfs[i]! / (peaks.tfs[i]! + c0 + c1 * peaks.lens[i]!));
    }
    return t.weight * best;
  };
  const order = terms.map((t) => ({ t, bound: bound(t) })).sort((a, b) => b.bound - a.bound);
  // rest[i]: the most the terms from i on can add to a document's score.
  const rest = new Float64Array(order.length + 1);
  for (let i = order.length - 1; i >= 0; i--) rest[i] = rest[i + 1]! + order[i]!.bound;

  let next = 0;
  let threshold = -Infinity;
  for (; next < order.length; next++) {
    if (count >= n) {
      threshold = nthBest(keys.subarray(0, count), n) * (1 - ROOM);
      if (rest[next]! < threshold) break;
    }
    const { weight, blocks } = order[next]!.t;
    for (const { postings } of blocks) {
      const { docnums, lens, tfs } = postings;
      for (let i = 0; i < docnums.length; i++) {
        const doc = docnums[i]!;
        if (dead[doc] === 1) continue;
        const tf = tfs[i]!;
        const before = acc[doc]!;
        if (before === 0) keys[count++] = doc;
        acc[doc] = before + (weight * tf) / (tf + c0 + c1 * lens[i]!);
      }
    }
  }
  const all = keys.subarray(0, count);
  if (next === order.length) {
    done();
    return collect(all, false);
  }

  let candidates = all.filter((k) => acc[k]! + rest[next]! >= threshold).sort();
  for (let j = next; j < order.length; j++) {
    const { weight, blocks } = order[j]!.t;
    let b = 0;
    let from = 0;
    for (const doc of candidates) {
      // Candidates ascend, and so do the term's blocks and their postings: one forward pass over both.
      if (doc >= index.base) continue;
      while (b < blocks.length && blocks[b]!.postings.docnums.at(-1)! < doc) {
        b += 1;
        from = 0;
      }
      if (b === blocks.length) break;
      const { docnums, lens, tfs } = blocks[b]!.postings;
      let lo = from;
      let hi = docnums.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (docnums[mid]! < doc) lo = mid + 1;
        else hi = mid;
      }
      from = lo;
      if (lo < docnums.length && docnums[lo] === doc && dead[doc] === 0) {
        const tf = tfs[lo]!;
        acc[doc] = acc[doc]! + (weight * tf) / (tf + c0 + c1 * lens[lo]!);
      }
    }
    threshold = Math.max(threshold, nthBest(candidates, n) * (1 - ROOM));
    const left = rest[j + 1]!;
    candidates = candidates.filter((k) => acc[k]! + left >= threshold);
  }
  done();
  return collect(candidates, true, all);
}

// Scratch for nthBest: a min-heap of the best scores seen.
let heap = new Float64Array(64);

// The n-th best accumulated score among `keys` (at least n of them), in one pass with a heap of n.
function nthBest(keys: Int32Array, n: number): number {
  if (keys.length < n) return -Infinity;
  if (n > 64 && keys.length > 8 * n) {
    // A large n: a heap would sift often; a quickselect over a copy is cheaper.
    return kthLargest(Float64Array.from(keys, (k) => accumulator[k]!), n);
  }
  if (heap.length < n) heap = new Float64Array(n);
  const acc = accumulator;
  let size = 0;
  for (const k of keys) {
    const v = acc[k]!;
    if (size < n) {
      // Sift up.
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent]! <= v) break;
        heap[i] = heap[parent]!;
        i = parent;
      }
      heap[i] = v;
    } else if (v > heap[0]!) {
      // Replace the smallest, sift down.
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && heap[r]! < heap[l]! ? r : l;
        if (heap[c]! >= v) break;
        heap[i] = heap[c]!;
        i = c;
      }
      heap[i] = v;
    }
  }
  return heap[0]!;
}
