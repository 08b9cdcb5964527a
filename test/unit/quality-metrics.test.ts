import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCisi, loadCranfield, parseDotted, type Qrels } from '../../bench/quality/collections.ts';
import { averagePrecision, evaluate, ndcgAt, recallAt } from '../../bench/quality/metrics.ts';

const judged = (entries: [string, number][]): Map<string, number> => new Map(entries);

describe('ndcgAt', () => {
  const graded = judged([
    ['d1', 3],
    ['d2', 2],
    ['d3', 1],
    ['n', 0],
  ]);

  it('discounts by log2(rank + 1) against the ideal order of the judged gains', () => {
    // DCG = 1/log2(2) + 3/log2(3); ideal = 3/log2(2) + 2/log2(3) + 1/log2(4)
    const value = (1 + 3 / Math.log2(3)) / (3 + 2 / Math.log2(3) + 1 / 2);
    expect(value).toBeCloseTo(0.607491518, 9);
    expect(ndcgAt(['d3', 'd1', 'x'], graded)).toBeCloseTo(value, 12);
  });

  it('is 1 for the ideal ranking and 0 with nothing relevant retrieved', () => {
    expect(ndcgAt(['d1', 'd2', 'd3'], graded)).toBeCloseTo(1, 12);
    expect(ndcgAt(['n', 'x', 'y'], graded)).toBe(0);
    expect(ndcgAt([], graded)).toBe(0);
    expect(ndcgAt(['d1'], judged([['n', 0]]))).toBe(0);
  });

  it('only looks at the first k and counts a repeated id once', () => {
    const ranking = [...Array.from({ length: 10 }, (_, i) => `x${i}`), 'd1'];
    expect(ndcgAt(ranking, graded, 10)).toBe(0);
    expect(ndcgAt(['d1', 'd1', 'd1'], graded)).toBeCloseTo(3 / (3 + 2 / Math.log2(3) + 1 / 2), 12);
    // With k = 1 the ideal holds only the best gain.
    expect(ndcgAt(['d2'], graded, 1)).toBeCloseTo(2 / 3, 12);
  });
});

describe('recallAt', () => {
  const binary = judged([
    ['r1', 1],
    ['r2', 1],
    ['r3', 1],
    ['r4', 1],
    ['n', 0],
  ]);

  it('is the share of relevant documents in the first k', () => {
    expect(recallAt(['r1', 'n', 'r3', 'x'], binary, 100)).toBe(0.5);
    expect(recallAt(['x', 'r1', 'r2'], binary, 2)).toBe(0.25);
    expect(recallAt(['r1', 'r1'], binary, 100)).toBe(0.25);
    expect(recallAt([], binary)).toBe(0);
  });
});

describe('averagePrecision', () => {
  it('averages precision at each relevant hit over all relevant documents', () => {
    const rel = judged([
      ['r1', 1],
      ['r2', 2],
      ['r3', 1],
    ]);
    expect(averagePrecision(['r1', 'x', 'r2'], rel)).toBeCloseTo((1 / 1 + 2 / 3) / 3, 12);
  });
});

describe('evaluate', () => {
  it('averages over queries with a relevant judgment, scoring missing rankings as zero', () => {
    const qrels: Qrels = new Map([
      ['q1', judged([['d1', 1]])],
      [
        'q2',
        judged([
          ['d2', 1],
          ['d3', 1],
        ]),
      ],
      ['q3', judged([['d4', 0]])], // nothing relevant: left out of the means
      ['q4', judged([['d5', 1]])], // judged but never ranked: zero
    ]);
    const rankings = new Map([
      ['q1', ['d1']],
      ['q2', ['x', 'd3']],
      ['q3', ['d4']],
    ]);
    const r = evaluate(rankings, qrels);
    expect(r.queries).toBe(3);
    expect(r.ndcg10).toBeCloseTo((1 + 1 / Math.log2(3) / (1 + 1 / Math.log2(3)) + 0) / 3, 12);
    expect(r.recall100).toBeCloseTo((1 + 0.5 + 0) / 3, 12);
    expect(r.map).toBeCloseTo((1 + 0.5 / 2 + 0) / 3, 12);
  });
});

describe('collections', () => {
  it('parses the dotted format, appending a repeated field', () => {
    const records = parseDotted('.I 007\n.T\nA title\n.A\nsomeone\n.W\nfirst part\n.W\nsecond part\n.I 8\n.W \ntext\n');
    expect(records.map((r) => r.id)).toEqual(['7', '8']);
    expect(records[0]!.fields.get('T')).toBe('A title');
    expect(records[0]!.fields.get('W')).toBe('first part\nsecond part');
    expect(records[1]!.fields.get('W')).toBe('text');
  });

  const dataDir = join(import.meta.dirname, '..', '..', '..', 'shared', 'data');
  it.skipIf(!existsSync(dataDir))('loads Cranfield and CISI with their judgments', () => {
    const cran = loadCranfield(dataDir);
    expect([cran.docs.length, cran.queries.length, cran.qrels.size]).toEqual([1400, 225, 225]);
    expect(cran.queries.at(-1)!.id).toBe('225');
    expect(cran.qrels.get('1')!.get('184')).toBe(3); // grade 2
    expect(cran.qrels.get('1')!.get('486')).toBe(0); // grade -1
    const cisi = loadCisi(dataDir);
    expect([cisi.docs.length, cisi.queries.length, cisi.qrels.size]).toEqual([1460, 112, 76]);
    expect(cisi.docs[0]!.text).toMatch(/^18 Editions of the Dewey Decimal Classifications\n/);
  });
});
