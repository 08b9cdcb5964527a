import { describe, expect, it } from 'vitest';
import { Bm25Reference } from '../support/bm25-reference.ts';

// Expected scores are written out from Lucene's BM25 here rather than taken from domain/search/bm25.ts, so a
// mistake in the shared formula cannot hide behind itself. k1 = 1.2, b = 0.75.
function expected(N: number, df: number, tf: number, len: number, avgLen: number): number {
  const weight = Math.log(1 + (N - df + 0.5) / (df + 0.5));
  return (weight * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * len) / avgLen));
}

// Words the Porter stemmer leaves alone, so the document frequencies below can be asked for by surface form.
function corpus(): Bm25Reference {
  const index = new Bm25Reference();
  index.add('a', 'fox dog fox'); // length 3
  index.add('b', 'The dog and the cat'); // length 2: stop words do not count
  index.add('c', 'cat cat cat bird'); // length 4
  return index;
}

describe('Bm25Reference', () => {
  it('keeps N, df and the average document length over the whole index', () => {
    const index = corpus();
    expect(index.size).toBe(3);
    expect(index.avgDocLen).toBe(3);
    expect([index.df('fox'), index.df('dog'), index.df('cat'), index.df('bird'), index.df('the')]).toEqual([1, 2, 2, 1, 0]);
  });

  it('scores a single term', () => {
    const hits = corpus().search('fox', 10);
    expect(hits.map((h) => h.id)).toEqual(['a']);
    // ln(1 + 2.5 / 1.5) * (2 * 2.2) / (2 + 1.2 * (0.25 + 0.75 * 3 / 3))
    expect(hits[0]!.score).toBeCloseTo(1.3486402229, 9);
    expect(hits[0]!.score).toBeCloseTo(expected(3, 1, 2, 3, 3), 12);
  });

  it('sums over query terms and ranks by score', () => {
    const hits = corpus().search('dog cat', 10);
    expect(hits.map((h) => h.id)).toEqual(['b', 'c', 'a']);
    const [b, c, a] = hits;
    expect(b!.score).toBeCloseTo(2 * expected(3, 2, 1, 2, 3), 12);
    expect(b!.score).toBeCloseTo(1.0884294572, 9);
    expect(c!.score).toBeCloseTo(expected(3, 2, 3, 4, 3), 12);
    expect(c!.score).toBeCloseTo(0.6893386562, 9);
    expect(a!.score).toBeCloseTo(expected(3, 2, 1, 3, 3), 12);
    expect(a!.score).toBeCloseTo(0.4700036292, 9);
  });

  it('analyzes queries like documents and ignores unknown terms', () => {
    const index = corpus();
    expect(index.search('The FOXES!', 10)).toEqual(index.search('fox', 10));
    expect(index.search('zebra of the', 10)).toEqual([]);
    expect(index.search('', 10)).toEqual([]);
  });

  it('counts a repeated query term once per occurrence', () => {
    const index = corpus();
    const once = index.search('fox', 10)[0]!.score;
    expect(index.search('fox FOX foxes', 10)[0]!.score).toBeCloseTo(3 * once, 12);
  });

  it('returns at most k hits', () => {
    expect(
      corpus()
        .search('dog cat', 2)
        .map((h) => h.id),
    ).toEqual(['b', 'c']);
    expect(corpus().search('dog cat', 0)).toEqual([]);
  });

  it('breaks ties by id ascending in code-unit order', () => {
    const index = new Bm25Reference();
    for (const id of ['b2', 'a1', '9', '10', 'B3', 'c3']) index.add(id, 'same words here');
    index.add('zz', 'other text');
    expect(index.search('words', 10).map((h) => h.id)).toEqual(['10', '9', 'B3', 'a1', 'b2', 'c3']);
  });

  it('updates statistics on removal', () => {
    const index = corpus();
    expect(index.remove('c')).toBe(true);
    expect(index.remove('c')).toBe(false);
    expect(index.size).toBe(2);
    expect(index.avgDocLen).toBe(2.5);
    expect(index.df('cat')).toBe(1);
    expect(index.df('bird')).toBe(0);
    const hits = index.search('cat bird', 10);
    expect(hits.map((h) => h.id)).toEqual(['b']);
    // ln(1 + 1.5 / 1.5) * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 2.5))
    expect(hits[0]!.score).toBeCloseTo(0.7549127709, 9);
    expect(hits[0]!.score).toBeCloseTo(expected(2, 1, 1, 2, 2.5), 12);
  });

  it('replaces a document added again under the same id', () => {
    const index = corpus();
    index.add('a', 'bird');
    expect(index.size).toBe(3);
    expect(index.avgDocLen).toBe(7 / 3);
    expect(index.df('fox')).toBe(0);
    expect(index.df('bird')).toBe(2);
  });

  it('counts documents with no terms in N and in the average length', () => {
    const index = corpus();
    index.add('d', 'the of and');
    expect(index.size).toBe(4);
    expect(index.avgDocLen).toBe(9 / 4);
    expect(index.search('fox', 10)[0]!.score).toBeCloseTo(expected(4, 1, 2, 3, 9 / 4), 12);
  });
});
