import { describe, expect, it } from 'vitest';
import { BlockCache, type CachedBlock } from '../../domain/search/block-cache.ts';
import { decodeBlock, encodeBlock, peaksOf } from '../../domain/search/blocks.ts';

const block = (first: number, count: number, version = '1'): CachedBlock => {
  const postings = decodeBlock(
    encodeBlock({
      docnums: Array.from({ length: count }, (_, i) => first + i),
      lens: new Array(count).fill(10),
      tfs: new Array(count).fill(1),
    }),
  );
  return { first, version, postings, peaks: peaksOf(postings) };
};

describe('the cache of decoded postings blocks', () => {
  it("keeps each org's terms apart and replaces a term's blocks with the latest read", () => {
    const cache = new BlockCache(1 << 20);
    cache.set('org-a', 'wing', [block(0, 10), block(10, 5)]);
    expect(cache.get('org-a', 'wing').map((b) => b.first)).toEqual([0, 10]);
    expect(cache.get('org-b', 'wing')).toEqual([]);
    cache.set('org-a', 'wing', [block(0, 15, '2')]);
    expect(cache.get('org-a', 'wing').map((b) => b.version)).toEqual(['2']);
    cache.set('org-a', 'wing', []);
    expect(cache.get('org-a', 'wing')).toEqual([]);
    expect(cache.bytes).toBe(0);
  });

  it('evicts the least recently used terms past its size, and keeps nothing at size 0', () => {
    // A block of 1,000 postings is 7,000 bytes of columns and 384 of overhead.
    const cache = new BlockCache(3 * 7_384);
    for (const term of ['a', 'b', 'c']) cache.set('org', term, [block(0, 1_000)]);
    cache.get('org', 'a');
    cache.set('org', 'd', [block(0, 1_000)]);
    expect(['a', 'b', 'c', 'd'].map((t) => cache.get('org', t).length)).toEqual([1, 0, 1, 1]);
    expect(cache.bytes).toBe(3 * 7_384);
    cache.resize(7_384);
    expect(cache.bytes).toBeLessThanOrEqual(7_384);
    cache.resize(0);
    expect(cache.bytes).toBe(0);
    cache.set('org', 'e', [block(0, 1)]);
    expect(cache.get('org', 'e')).toEqual([]);
  });
});
