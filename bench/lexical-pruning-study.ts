// Before choosing how lexical search stops scoring every posting (issue 14): how much work each rank-safe
// design would do at 1,000,000 memories of the benchmark's own kind, counted offline in memory, with the
// exhaustive BM25 ranking as the oracle. A design is rank-safe when its top 10 is exactly the oracle's.
//   node bench/lexical-pruning-study.ts            (N=1000000 QUERIES=400 by default)
// Work is counted in postings read (sequentially, as from an index range) and random lookups (one term's tf
// of one memory, as an index probe); the guide's measure for PostgreSQL is about 0.55 us per posting read
// when it groups by memory, so the counts translate to a latency budget.
import { analyze } from '../domain/store/analyzer.ts';
import { B, idf, K1, queryTermCounts } from '../domain/search/bm25.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { agentPostings } from './lib/agent-postings.ts';
import { Corpus } from './lib/corpus.ts';
import { summarize } from './lib/stats.ts';

const N = Number(process.env.N ?? 1_000_000);
const QUERIES = Number(process.env.QUERIES ?? 400);
const K = 10;
const corpus = new Corpus(new URL('../../shared/data', import.meta.url).pathname);
const agent = agentMemoryGenerator(corpus);

const started = performance.now();
const { postings, lengths, total: totalLength } = agentPostings(() => agent.memory(), N);
const avgdl = totalLength / N;
let totalPostings = 0;
for (const list of postings.values()) totalPostings += list.docs.length;
console.log(`${N} memories, ${postings.size} terms, ${totalPostings} postings (${(totalPostings / N).toFixed(1)} a memory), built in ${((performance.now() - started) / 1000).toFixed(0)} s`);

const c0 = K1 * (1 - B);
const c1 = (K1 * B) / avgdl;
const part = (tf: number, len: number) => tf / (tf + c0 + c1 * len);

interface Term {
  weight: number; // qtf * idf * (k1 + 1)
  docs: number[];
  tfs: number[];
}

function termsOf(text: string): Term[] {
  return [...queryTermCounts(analyze(text))].flatMap(([t, qtf]) => {
    const list = postings.get(t);
    return list ? [{ weight: qtf * idf(N, list.docs.length) * (K1 + 1), docs: list.docs, tfs: list.tfs }] : [];
  });
}

type Hit = { doc: number; score: number };
const better = (a: Hit, b: Hit) => b.score - a.score || a.doc - b.doc;

function exhaustive(terms: Term[]): { top: Hit[]; read: number } {
  const scores = new Map<number, number>();
  let read = 0;
  for (const t of terms) {
    for (let i = 0; i < t.docs.length; i++) scores.set(t.docs[i]!, (scores.get(t.docs[i]!) ?? 0) + t.weight * part(t.tfs[i]!, lengths[t.docs[i]!]!));
    read += t.docs.length;
  }
  return { top: [...scores].map(([doc, score]) => ({ doc, score })).sort(better).slice(0, K), read };
}

// One term's tf in a memory, by binary search: an index probe on (org, term, memory).
function tfOf(t: Term, doc: number): number {
  let lo = 0;
  let hi = t.docs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const d = t.docs[mid]!;
    if (d === doc) return t.tfs[mid]!;
    if (d < doc) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

// Block-max: each term's postings cut into blocks of `size` in memory order, each with its best tf and
// shortest length, so an upper bound of any of its postings' contribution is known without reading it.
// Phase 1 scores exactly the memories of each term's best block (finding them in the other terms by
// lookups), which gives a threshold θ (the k-th best score so far). A block can hold a memory that beats θ
// only if its bound plus every other term's best bound reaches θ; phase 2 scores exactly the memories of those
// blocks. Every winner is in such a block, so the result is the exact top k.
function blockMax(terms: Term[], size: number): { top: Hit[]; read: number; lookups: number; headers: number } {
  const blocks = terms.map((t) => {
    const out: { from: number; to: number; bound: number }[] = [];
    for (let i = 0; i < t.docs.length; i += size) {
      let maxTf = 0;
      let minLen = Infinity;
      for (let j = i; j < Math.min(i + size, t.docs.length); j++) {
        maxTf = Math.max(maxTf, t.tfs[j]!);
        minLen = Math.min(minLen, lengths[t.docs[j]!]!);
      }
      out.push({ from: i, to: Math.min(i + size, t.docs.length), bound: t.weight * part(maxTf, minLen) });
    }
    return out;
  });
  const headers = blocks.reduce((n, b) => n + b.length, 0);
  const best = blocks.map((b) => Math.max(...b.map((x) => x.bound)));
  const scored = new Map<number, number>();
  let read = 0;
  let lookups = 0;
  const scoreBlock = (ti: number, block: { from: number; to: number }) => {
    const t = terms[ti]!;
    read += block.to - block.from;
    for (let i = block.from; i < block.to; i++) {
      const doc = t.docs[i]!;
      if (scored.has(doc)) continue;
      let score = 0;
      terms.forEach((u, ui) => {
        const tf = ui === ti ? t.tfs[i]! : tfOf(u, doc);
        if (ui !== ti) lookups++;
        if (tf > 0) score += u.weight * part(tf, lengths[doc]!);
      });
      scored.set(doc, score);
    }
  };
  const done = new Set<string>();
  blocks.forEach((b, ti) => {
    const top = b.reduce((x, y) => (y.bound > x.bound ? y : x));
    scoreBlock(ti, top);
    done.add(`${ti}:${top.from}`);
  });
  const theta = () => [...scored.values()].sort((a, b) => b - a)[K - 1] ?? 0;
  const threshold = theta();
  const restBest = best.reduce((a, b) => a + b, 0);
  blocks.forEach((b, ti) => {
    for (const block of b) {
      if (done.has(`${ti}:${block.from}`)) continue;
      if (block.bound + restBest - best[ti]! >= threshold) scoreBlock(ti, block);
    }
  });
  return { top: [...scored].map(([doc, score]) => ({ doc, score })).sort(better).slice(0, K), read, lookups, headers };
}

// Block-max over ranges of memories shared by every term (ranges of `width` consecutive memories): per term and
// range, the best contribution any of its postings there can make. A range whose bounds, summed over the query's
// terms, cannot reach θ is skipped for every term at once (what block-max WAND's aligned skipping achieves).
// Ranges are visited best bound first; θ is the k-th best exact score so far, and the visit stops at the first
// range whose bound is below θ.
function alignedBlockMax(terms: Term[], width: number, seed: Hit[] = []): { top: Hit[]; read: number; lookups: number; headers: number } {
  const ranges = new Map<number, { bound: number; slices: { ti: number; from: number; to: number }[] }>();
  let headers = 0;
  terms.forEach((t, ti) => {
    let i = 0;
    while (i < t.docs.length) {
      const range = Math.floor(t.docs[i]! / width);
      let j = i;
      let maxPart = 0;
      while (j < t.docs.length && Math.floor(t.docs[j]! / width) === range) {
        maxPart = Math.max(maxPart, part(t.tfs[j]!, lengths[t.docs[j]!]!));
        j++;
      }
      const entry = ranges.get(range) ?? { bound: 0, slices: [] };
      entry.bound += t.weight * maxPart;
      entry.slices.push({ ti, from: i, to: j });
      ranges.set(range, entry);
      headers++;
      i = j;
    }
  });
  const order = [...ranges.values()].sort((a, b) => b.bound - a.bound);
  const top: number[] = seed.map((h) => h.score).sort((a, b) => b - a).slice(0, K);
  const scores = new Map<number, number>(seed.map((h) => [h.doc, h.score]));
  let read = 0;
  for (const range of order) {
    if (top.length === K && range.bound < top[K - 1]!) break;
    const local = new Map<number, number>();
    for (const { ti, from, to } of range.slices) {
      const t = terms[ti]!;
      read += to - from;
      for (let i = from; i < to; i++) local.set(t.docs[i]!, (local.get(t.docs[i]!) ?? 0) + t.weight * part(t.tfs[i]!, lengths[t.docs[i]!]!));
    }
    for (const [doc, score] of local) {
      if (!scores.has(doc)) top.push(score); // a memory the seed scored is already among them
      scores.set(doc, score);
    }
    top.sort((a, b) => b - a);
    top.length = Math.min(top.length, K);
  }
  return { top: [...scores].map(([doc, score]) => ({ doc, score })).sort(better).slice(0, K), read, lookups: 0, headers };
}

// Impact order (Fagin's threshold algorithm): each term's postings sorted by their contribution, read down all
// lists in turn; a memory seen for the first time is scored exactly by lookups in the other terms; stop when
// the k-th best score reaches the sum of the contributions at the lists' current positions.
function impactOrdered(terms: Term[]): { top: Hit[]; read: number; lookups: number } {
  const lists = terms.map((t) => t.docs.map((doc, i) => ({ doc, c: t.weight * part(t.tfs[i]!, lengths[doc]!) })).sort((a, b) => b.c - a.c));
  const scored = new Map<number, number>();
  const topK: number[] = [];
  let read = 0;
  let lookups = 0;
  const pos = lists.map(() => 0);
  for (;;) {
    let progressed = false;
    lists.forEach((list, li) => {
      const p = pos[li]!;
      if (p >= list.length) return;
      progressed = true;
      pos[li] = p + 1;
      read++;
      const { doc } = list[p]!;
      if (scored.has(doc)) return;
      let score = 0;
      terms.forEach((u) => {
        lookups++;
        const tf = tfOf(u, doc);
        if (tf > 0) score += u.weight * part(tf, lengths[doc]!);
      });
      lookups--; // the list's own term needs no lookup
      scored.set(doc, score);
      topK.push(score);
      topK.sort((a, b) => b - a);
      if (topK.length > K) topK.pop();
    });
    const threshold = lists.reduce((sum, list, li) => sum + (list[pos[li]!]?.c ?? 0), 0);
    if (!progressed || (topK.length === K && topK[K - 1]! >= threshold)) break;
  }
  // Ties at the k-th score would need the next equal contributions read too; counted as exact when the ids agree.
  return { top: [...scored].map(([doc, score]) => ({ doc, score })).sort(better).slice(0, K), read, lookups };
}

// Impact order read in rounds (one index range per term per round, `batch` postings deep), lookups deferred:
// a memory's seen contributions are a lower bound of its score, and adding the current position's contribution
// of each list it was not seen in gives an upper bound. Reading stops once the k-th best lower bound (θ) is above
// what a memory seen in no list could score (the sum of the lists' current contributions); then only memories
// whose upper bound reaches θ are scored exactly, by lookups of the terms they were not seen in.
function impactRounds(terms: Term[], batch: number): { top: Hit[]; read: number; lookups: number; rounds: number } {
  const lists = terms.map((t) => t.docs.map((doc, i) => ({ doc, c: t.weight * part(t.tfs[i]!, lengths[doc]!) })).sort((a, b) => b.c - a.c));
  const seen = new Map<number, { sum: number; mask: number }>();
  let depth = 0;
  let read = 0;
  let rounds = 0;
  let theta = 0;
  const cursor = (li: number) => lists[li]![depth]?.c ?? 0;
  for (;;) {
    rounds++;
    lists.forEach((list, li) => {
      for (let i = depth; i < Math.min(depth + batch, list.length); i++) {
        const { doc, c } = list[i]!;
        const entry = seen.get(doc) ?? { sum: 0, mask: 0 };
        entry.sum += c;
        entry.mask |= 1 << li;
        seen.set(doc, entry);
        read++;
      }
    });
    depth += batch;
    theta = [...seen.values()].map((e) => e.sum).sort((a, b) => b - a)[K - 1] ?? 0;
    const unseenBound = lists.reduce((sum, _, li) => sum + cursor(li), 0);
    if (unseenBound < theta || lists.every((list) => depth >= list.length)) break;
  }
  let lookups = 0;
  const exact: Hit[] = [];
  for (const [doc, { sum, mask }] of seen) {
    let upper = sum;
    lists.forEach((_, li) => {
      if (!(mask & (1 << li))) upper += cursor(li);
    });
    if (upper < theta) continue;
    let score = 0;
    terms.forEach((u, ui) => {
      if (!(mask & (1 << ui))) lookups++;
      const tf = tfOf(u, doc);
      if (tf > 0) score += u.weight * part(tf, lengths[doc]!);
    });
    exact.push({ doc, score });
  }
  return { top: exact.sort(better).slice(0, K), read, lookups, rounds };
}

// Both: the best `depth` postings of each term by impact, scored exactly by lookups, give θ at once; then the
// shared ranges whose bound reaches θ are read whole (no lookups), best bound first.
function seededRanges(terms: Term[], depth: number, width: number): { top: Hit[]; read: number; lookups: number; headers: number } {
  const seed = new Map<number, number>();
  let read = 0;
  let lookups = 0;
  terms.forEach((t) => {
    const best = t.docs.map((doc, i) => ({ doc, c: part(t.tfs[i]!, lengths[doc]!) })).sort((a, b) => b.c - a.c).slice(0, depth);
    read += best.length;
    for (const { doc } of best) {
      if (seed.has(doc)) continue;
      let score = 0;
      terms.forEach((u) => {
        lookups++;
        const tf = tfOf(u, doc);
        if (tf > 0) score += u.weight * part(tf, lengths[doc]!);
      });
      lookups--;
      seed.set(doc, score);
    }
  });
  const ranged = alignedBlockMax(terms, width, [...seed].map(([doc, score]) => ({ doc, score })));
  return { ...ranged, read: read + ranged.read, lookups };
}

const same = (a: Hit[], b: Hit[]) => a.length === b.length && a.every((h, i) => h.doc === b[i]!.doc);
type Row = { read: number[]; lookups: number[]; headers: number[]; exact: number };
const rows = new Map<string, Row>();
const record = (name: string, r: { top: Hit[]; read: number; lookups?: number; headers?: number }, oracle: Hit[]) => {
  const row = rows.get(name) ?? { read: [], lookups: [], headers: [], exact: 0 };
  row.read.push(r.read);
  row.lookups.push(r.lookups ?? 0);
  row.headers.push(r.headers ?? 0);
  if (same(r.top, oracle)) row.exact++;
  rows.set(name, row);
};

for (let q = 0; q < QUERIES; q++) {
  const terms = termsOf(agent.query());
  if (terms.length === 0) continue;
  const oracle = exhaustive(terms);
  record('exhaustive (today)', oracle, oracle.top);
  record('block-max per term, blocks of 128', blockMax(terms, 128), oracle.top);
  for (const width of [256, 4096]) record(`block-max over shared ranges of ${width} memories`, alignedBlockMax(terms, width), oracle.top);
  record('impact order (threshold algorithm)', impactOrdered(terms), oracle.top);
  record('impact order in rounds of 256, lookups deferred', impactRounds(terms, 256), oracle.top);
  for (const width of [64, 256]) record(`best 100 by impact per term, then shared ranges of ${width}`, seededRanges(terms, 100, width), oracle.top);
}

const p = (xs: number[], q: number) => summarize(xs)[q === 50 ? 'p50' : q === 95 ? 'p95' : 'p99'];
console.log(`\n| design | postings read p50 / p95 / p99 | lookups p50 / p95 / p99 | block headers p50 | exact top ${K} |`);
console.log('|---|---|---|---|---|');
for (const [name, r] of rows) {
  console.log(
    `| ${name} | ${p(r.read, 50)} / ${p(r.read, 95)} / ${p(r.read, 99)} | ${p(r.lookups, 50)} / ${p(r.lookups, 95)} / ${p(r.lookups, 99)} | ${p(r.headers, 50)} | ${r.exact} of ${r.read.length} |`,
  );
}
