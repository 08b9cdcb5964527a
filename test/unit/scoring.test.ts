import { describe, expect, it } from 'vitest';
import { decodeBlock, encodeBlock, peaksOf } from '../../domain/search/blocks.ts';
import { BUFFER_KEEP_ENTRIES, scoreAll, scoringBufferBytes, scoreBest, type IndexRead, type Scored } from '../../domain/search/scoring.ts';
import { maxScore } from '../../domain/search/top-scores.ts';

// MaxScore (maxScore) against scoring every posting (scoreAll) on random indexes: rare and common terms,
// blocks of several sizes, tombstones, staged memories, lengths and tfs that make many exact ties.
let seed = 11;
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;

function randomIndex(documents: number, staged: number, blockSize: number): { index: IndexRead; terms: string[]; lens: number[] } {
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
  return { index, terms, lens };
}

const asMap = (s: Scored) => new Map(Array.from(s.keys, (k, i) => [k, s.scores[i]!]));

describe('the best n over postings blocks, by MaxScore and from every posting', () => {
  it('finds every document scoring at least the n-th best, ties included, with the exhaustive scores to the last bit', () => {
    const prunedRuns = { 'document at a time': 0, 'the best of all': 0 };
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
        // The cursors, and every posting with the best kept,, whatever the number of terms (scoreTop chooses by it).
        for (const [way, top] of [
          ['document at a time', maxScore],
          ['the best of all', scoreBest],
        ] as const) {
          for (const n of [1, 10, 100]) {
            const scored = top(index, counts, n);
            if (scored.pruned) prunedRuns[way] += 1;
            const found = asMap(scored);
            // Summed in the query's term order, as scoreAll sums: equal to the last bit, so ties stay ties.
            for (const [key, score] of found) expect(score, `${way}, key ${key}`).toBe(all.get(key));
            const nth = ranked[Math.min(n, ranked.length) - 1];
            if (nth === undefined) continue;
            for (const [key, score] of all)
              if (score >= nth) expect(found.has(key), `${way}, n ${n}, ${JSON.stringify(counts)}, key ${key}`).toBe(true);
          }
        }
      }
    }
    // The property was checked where pruning happened, not only where it gave up.
    expect(prunedRuns['document at a time']).toBeGreaterThan(100);
    expect(prunedRuns['the best of all']).toBeGreaterThan(100);
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
    scoreBest(index, counts, 5);
    expect(asMap(scoreAll(index, counts))).toEqual(first);
  });

  it("scores only the documents of a scope, with its statistics or the org's, to the last bit", () => {
    const { index, terms, lens } = randomIndex(5_000, 60, 256);
    const dead = new Set(index.tombstones);
    const docnums = Array.from({ length: index.base }, (_, d) => d).filter((d) => !dead.has(d) && random() < 0.1);
    const stagedKeys = new Set(index.stagedIds.map((_, i) => index.base + i).filter(() => random() < 0.3));
    const members = [...docnums, ...stagedKeys];
    const statistics = { n: members.length, total: members.reduce((sum, d) => sum + lens[d]!, 0) };
    // The same scope as an index of its own: only its postings.
    const alone: IndexRead = { ...index, blocks: new Map(), staged: new Map(), ...statistics };
    const inScope = new Set(members);
    for (const [term, blocks] of index.blocks) {
      const kept = blocks.flatMap(({ postings: p }) => {
        const at = Array.from(p.docnums.keys()).filter((i) => inScope.has(p.docnums[i]!));
        if (at.length === 0) return [];
        const postings = decodeBlock(
          encodeBlock({ docnums: at.map((i) => p.docnums[i]!), lens: at.map((i) => p.lens[i]!), tfs: at.map((i) => p.tfs[i]!) }),
        );
        return [{ postings, peaks: peaksOf(postings) }];
      });
      if (kept.length > 0) alone.blocks.set(term, kept);
    }
    for (const [term, staged] of index.staged)
      alone.staged.set(
        term,
        staged.filter((p) => stagedKeys.has(p.key)),
      );
    const own: IndexRead = { ...index, scope: { docnums: Int32Array.from(docnums), stagedKeys, statistics } };
    const orgs: IndexRead = { ...index, scope: { docnums: Int32Array.from(docnums), stagedKeys, statistics: null } };
    let differ = 0;
    for (let q = 0; q < 40; q++) {
      const counts: [string, number][] = terms.filter(() => random() < 0.25).map((t) => [t, 1 + Math.floor(random() * 2)]);
      if (counts.length === 0) continue;
      // With its own statistics: as the index of the scope alone.
      const scoped = asMap(scoreAll(own, counts));
      expect(scoped).toEqual(asMap(scoreAll(alone, counts)));
      // With the org's: the org's scores of the scope's documents.
      const whole = asMap(scoreAll(index, counts));
      expect(asMap(scoreAll(orgs, counts))).toEqual(new Map([...whole].filter(([key]) => inScope.has(key))));
      if ([...scoped].some(([key, score]) => whole.get(key) !== score)) differ += 1;
      // MaxScore within the scope: the same scores, and every document reaching the 10th best.
      for (const scope of [own, orgs]) {
        const all = asMap(scoreAll(scope, counts));
        const top = asMap(maxScore(scope, counts, 10));
        for (const [key, score] of top) expect(score).toBe(all.get(key));
        const nth = [...all.values()].sort((a, b) => b - a)[Math.min(10, all.size) - 1];
        if (nth !== undefined) for (const [key, score] of all) if (score >= nth) expect(top.has(key)).toBe(true);
      }
    }
    // The scope's statistics change the scores.
    expect(differ).toBeGreaterThan(20);
    // And no mark is left behind for a search without a scope.
    const counts: [string, number][] = [
      ['t0', 1],
      ['t3', 1],
    ];
    const before = asMap(scoreAll(index, counts));
    scoreAll(own, counts);
    maxScore(orgs, counts, 5);
    expect(asMap(scoreAll(index, counts))).toEqual(before);
  });

  it('lets go of buffers past BUFFER_KEEP_ENTRIES once a search of an org with that many document numbers ends', () => {
    // Two documents numbered past the bound, as in an org whose memories were edited millions of times.
    const base = BUFFER_KEEP_ENTRIES + 2;
    const docnums = [BUFFER_KEEP_ENTRIES, BUFFER_KEEP_ENTRIES + 1];
    const postings = decodeBlock(encodeBlock({ docnums, lens: [3, 4], tfs: [1, 2] }));
    const index: IndexRead = {
      blocks: new Map([['far', [{ postings, peaks: peaksOf(postings) }]]]),
      staged: new Map(),
      base,
      stagedIds: [],
      tombstones: new Int32Array(),
      n: 2,
      total: 7,
    };
    for (const score of [() => scoreAll(index, [['far', 1]]), () => maxScore(index, [['far', 1]], 1)]) {
      const scored = score();
      expect([...scored.keys]).toContain(BUFFER_KEEP_ENTRIES + 1);
      expect(scoringBufferBytes()).toBeLessThan(BUFFER_KEEP_ENTRIES);
    }
  });
});
