import { describe, expect, it } from 'vitest';
import { nonIncreasing, RECOMMENDED_FLOOR, relevanceOf } from '../../domain/search/relevance.ts';
import { LOCAL_MODELS } from '../../infra/embeddings/local-models.ts';

// The relevance scale (domain/search/relevance.ts): in [0, 1], rising with what each list measured, never rising
// down a ranking.
describe('relevance', () => {
  it('rises with the lexical share and the cosine its mode reads, within [0, 1]', () => {
    for (const mode of ['lexical', 'semantic', 'hybrid'] as const) {
      const semantic = mode === 'lexical' ? null : 0.6;
      const low = relevanceOf(mode, { lexical: 0.05, semantic });
      const words = relevanceOf(mode, { lexical: 0.6, semantic });
      expect(low).toBeGreaterThanOrEqual(0);
      expect(words).toBeLessThanOrEqual(1);
      // Semantic mode has no lexical list: the words weigh nothing there.
      if (mode === 'semantic') expect(words).toBe(low);
      else expect(words).toBeGreaterThan(low);
      if (semantic !== null) expect(relevanceOf(mode, { lexical: 0.05, semantic: 0.9 })).toBeGreaterThan(low);
    }
  });

  it('puts a memory about something else under the recommended floor and a close one above it, by meaning', () => {
    expect(relevanceOf('semantic', { lexical: 0, semantic: 0.5 })).toBeLessThan(RECOMMENDED_FLOOR);
    expect(relevanceOf('semantic', { lexical: 0, semantic: 0.9 })).toBeGreaterThan(RECOMMENDED_FLOOR);
    expect(relevanceOf('hybrid', { lexical: 0.5, semantic: 0.85 })).toBeGreaterThan(RECOMMENDED_FLOOR);
  });

  it('never lets a later hit of a ranking rise above an earlier one', () => {
    expect(nonIncreasing([0.4, 0.7, 0.2, 0.3, 0.1])).toEqual([0.4, 0.4, 0.2, 0.2, 0.1]);
    expect(nonIncreasing([])).toEqual([]);
  });

  it("reads a model's cosines with that model's curves: e5's sit higher, so the same cosine means less", () => {
    const e5 = LOCAL_MODELS['e5-small-v2'].relevance;
    for (const mode of ['semantic', 'hybrid'] as const) {
      const inputs = { lexical: 0, semantic: 0.8 };
      expect(relevanceOf(mode, inputs, e5)).toBeLessThan(relevanceOf(mode, inputs));
      // An unrelated text's cosine under e5 (about 0.75) stays under the floor; a close one (0.95) clears it.
      expect(relevanceOf(mode, { lexical: 0, semantic: 0.75 }, e5)).toBeLessThan(RECOMMENDED_FLOOR);
      expect(relevanceOf(mode, { lexical: 0, semantic: 0.95 }, e5)).toBeGreaterThan(RECOMMENDED_FLOOR);
    }
    // Lexical relevance does not depend on the model.
    expect(relevanceOf('lexical', { lexical: 0.4, semantic: null }, e5)).toBe(relevanceOf('lexical', { lexical: 0.4, semantic: null }));
  });
});
