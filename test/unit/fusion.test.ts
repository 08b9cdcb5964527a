import { describe, expect, it } from 'vitest';
import { fuse, RRF_K } from '../../domain/search/fusion.ts';

const list = (...ids: string[]) => ids.map((id, i) => ({ id, score: 100 - i }));

describe('reciprocal rank fusion', () => {
  it('sums 1 / (k + rank) over the lists that found a memory', () => {
    const fused = fuse({ lexical: list('a', 'b'), semantic: list('b', 'c') }, 10);
    expect(fused.map((f) => f.id)).toEqual(['b', 'a', 'c']);
    expect(fused[0]).toEqual({ id: 'b', score: 1 / (RRF_K + 2) + 1 / (RRF_K + 1), foundBy: ['lexical', 'semantic'] });
    expect(fused[1]).toEqual({ id: 'a', score: 1 / (RRF_K + 1), foundBy: ['lexical'] });
  });

  it('ignores the scores themselves, breaks ties by id, and keeps the top k', () => {
    const fused = fuse({ lexical: [{ id: 'z', score: 1e9 }], semantic: [{ id: 'y', score: 0.1 }] }, 1);
    expect(fused).toEqual([{ id: 'y', score: 1 / (RRF_K + 1), foundBy: ['semantic'] }]);
  });

  it('handles empty and single lists', () => {
    expect(fuse({ lexical: [], semantic: [] }, 5)).toEqual([]);
    expect(fuse({ semantic: list('a', 'b') }, 5).map((f) => f.id)).toEqual(['a', 'b']);
  });
});
