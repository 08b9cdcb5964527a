import { describe, expect, it } from 'vitest';
import { fuse, SEMANTIC_WEIGHT } from '../../domain/search/fusion.ts';

const L = 1 - SEMANTIC_WEIGHT;
const S = SEMANTIC_WEIGHT;

describe('relative score fusion', () => {
  it("scales each list's scores to [0, 1] between its worst and best hit and adds them with their weights", () => {
    const fused = fuse(
      {
        lexical: [
          { id: 'a', score: 12 },
          { id: 'b', score: 8 },
          { id: 'c', score: 2 },
        ],
        semantic: [
          { id: 'b', score: 0.9 },
          { id: 'd', score: 0.8 },
          { id: 'a', score: 0.5 },
        ],
      },
      10,
    );
    const expected = [
      { id: 'b', score: L * 0.6 + S * 1, foundBy: ['lexical', 'semantic'] },
      { id: 'a', score: L * 1 + S * 0, foundBy: ['lexical', 'semantic'] },
      { id: 'd', score: S * 0.75, foundBy: ['semantic'] },
      { id: 'c', score: 0, foundBy: ['lexical'] },
    ].sort((x, y) => y.score - x.score);
    expect(fused).toEqual(expected.map((e) => ({ ...e, score: expect.closeTo(e.score, 12) })));
  });

  it('gives full credit when a list scores all its hits alike, breaks ties by id, and keeps the top k', () => {
    const fused = fuse({ lexical: [{ id: 'z', score: 3 }], semantic: [{ id: 'y', score: 0.4 }] }, 1);
    expect(fused).toEqual([{ id: 'y', score: Math.max(L, S), foundBy: ['semantic'] }]);
  });

  it('handles empty and single lists', () => {
    expect(fuse({ lexical: [], semantic: [] }, 5)).toEqual([]);
    expect(
      fuse(
        {
          semantic: [
            { id: 'a', score: 0.9 },
            { id: 'b', score: 0.5 },
          ],
        },
        5,
      ).map((f) => f.id),
    ).toEqual(['a', 'b']);
  });
});
