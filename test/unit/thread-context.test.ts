import { describe, expect, it } from 'vitest';
import { CONTEXT_WEIGHT, withContext } from '../../domain/store/thread-context.ts';

describe('a thread chunk mixed with its context', () => {
  it('adds CONTEXT_WEIGHT of each chunk before it to its own vector, as a unit vector', () => {
    const own = Float32Array.from([1, 0, 0]);
    const mixed = withContext(own, [Float32Array.from([0, 1, 0]), Float32Array.from([0, 0, 1])]);
    const norm = Math.sqrt(1 + 2 * CONTEXT_WEIGHT ** 2);
    expect([...mixed].map((x) => x.toFixed(6))).toEqual([1 / norm, CONTEXT_WEIGHT / norm, CONTEXT_WEIGHT / norm].map((x) => x.toFixed(6)));
    expect(Math.hypot(...mixed)).toBeCloseTo(1, 6);
  });

  it('leaves a chunk without context as it is, and its own vector unchanged', () => {
    const own = Float32Array.from([0.6, 0.8]);
    expect([...withContext(own, [])]).toEqual([...own]);
    withContext(own, [Float32Array.from([1, 0])]);
    expect([...own]).toEqual([...Float32Array.from([0.6, 0.8])]);
  });
});
