import { describe, expect, it } from 'vitest';
import { decodeBlock, encodeBlock, peaksOf } from '../../domain/search/blocks.ts';
import { maxScore, scoreAll, type IndexRead, type Scored } from '../../domain/search/scoring.ts';

// MaxScore (maxScore) against scoring every posting (scoreAll) on random indexes: rare and common terms,
// blocks of several sizes, tombstones, staged memories, lengths and tfs that make many exact ties.
let seed = 11;
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;

function randomIndex(documents: number, staged: number, blockSize: number): { index: IndexRead; terms: string[] } {
  const terms = Array.from({ length: 12 }, (_, i) => `t${i}`);
  // Term i appears in about a share 0.6 / (i + 1)^1.3 of the documents.
  const share = terms.map((_, i) => 0.6 / (i + 1) ** 1.3);
  const lens = Array.from({ length: documents + staged }, () => 5 + Math.floor(random() * (random() < 0.5 ? 4 : 60)));
  let total = 0;
  for (const len of lens) total += len;
  const tombstones = Array.from({ length: documents }, (_, d) => d).filter(() => random() < 0.05);
  const index: IndexRead = {
    blocks: new Map(),
    staged: new Map(),
    base: documents,
    stagedIds: Array.from({ length: staged }, (_, i) => `s${i}`),
    tombstones: Int32Array.from(tombstones),
    n: documents + staged - tombstones.length,
    total,
  };
  const tfOf = () => (random() < 0.8 ? 1 : 1 + Math.floor(random() * 4));
  terms.forEach((term, i) => {
    const docs = Array.from({ length: documents }, (_, d) => d).filter(() => random() < share[i]!);
    const blocks = [];
    for (let at = 0; at < docs.length; at += blockSize) {
      const part = docs.slice(at, at + blockSize);
      const postings = decodeBlock(encodeBlock({ docnums: part, lens: part.map((d) => lens[d]!), tfs: part.map(tfOf) }));
      blocks.push({ postings, peaks: peaksOf(postings) });
    }
    if (blocks.length > 0) index.blocks.set(term, blocks);
    const stagedPostings = Array.from({ length: staged }, (_, s) => s)
      .filter(() => random() < share[i]!)
      .map((s) => ({ key: documents + s, tf: tfOf(), len: lens[documents + s]! }));
    if (stagedPostings.length > 0) index.staged.set(term, stagedPostings);
  });
  return { index, terms };
}

const asMap = (s: Scored) => new Map(Array.from(s.keys, (k, i) => [k, s.scores[i]!]));

describe('MaxScore over postings blocks', () => {
  it('finds every document scoring at least the n-th best, ties included, with the exhaustive scores to the last bit', () => {
    let prunedRuns = 0;
    for (const [documents, staged, blockSize] of [
      [3_000, 0, 64],
      [3_000, 40, 500],
      [20_000, 200, 4_096],
      [50, 5, 8],
    ] as const) {
      const { index, terms } = randomIndex(documents, staged, blockSize);
      for (let q = 0; q < 60; q++) {
        const counts: [string, number][] = [];
        const size = 1 + Math.floor(random() * (q % 4 === 0 ? 12 : 5));
        for (let i = 0; i < size; i++) {
          const term = random() < 0.1 ? 'absent' : terms[Math.floor(random() * terms.length)]!;
          const at = counts.findIndex(([t]) => t === term);
          if (at >= 0) counts[at]![1] += 1;
          else counts.push([term, 1]);
        }
        const all = asMap(scoreAll(index, counts));
        const ranked = [...all.values()].sort((a, b) => b - a);
        for (const n of [1, 10, 100]) {
          // The cursors themselves, whatever the number of terms (scoreTop uses them up to MAX_CURSORS).
          const top = maxScore(index, counts, n);
          if (top.pruned) prunedRuns += 1;
          const found = asMap(top);
          // Summed in the query's term order, as scoreAll sums: equal to the last bit, so ties stay ties.
          for (const [key, score] of found) expect(score).toBe(all.get(key));
          const nth = ranked[Math.min(n, ranked.length) - 1];
          if (nth === undefined) continue;
          for (const [key, score] of all) if (score >= nth) expect(found.has(key), `n ${n}, ${JSON.stringify(counts)}, key ${key}`).toBe(true);
        }
      }
    }
    // The property was checked where pruning happened, not only where it gave up.
    expect(prunedRuns).toBeGreaterThan(100);
  });

  it('leaves the accumulators clean for the next search', () => {
    const { index } = randomIndex(2_000, 10, 128);
    const counts: [string, number][] = [
      ['t0', 1],
      ['t7', 1],
    ];
    const first = asMap(scoreAll(index, counts));
    maxScore(index, counts, 5);
    expect(asMap(scoreAll(index, counts))).toEqual(first);
  });
});
