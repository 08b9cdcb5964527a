import { describe, expect, it } from 'vitest';
import { BestFirst } from '../../domain/search/best-first.ts';

describe('BestFirst', () => {
  it('hands out every position best first, each batch extended over ties, for any batch sizes', () => {
    let seed = 3;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (const size of [0, 1, 2, 7, 100, 5_000]) {
      for (const distinct of [1, 3, 50, 1e9]) {
        const scores = Float64Array.from({ length: size }, () => Math.floor(random() * distinct));
        const order = new BestFirst(scores);
        const taken: number[] = [];
        let batch = 1 + Math.floor(random() * 5);
        const stopAt = Math.floor(random() * (size + 1));
        while (!order.done) {
          if (taken.length >= stopAt && distinct === 3) {
            // The rest, unsorted: exactly the positions not taken.
            taken.push(...order.rest());
            break;
          }
          const part = [...order.take(batch)];
          expect(part.length).toBeGreaterThanOrEqual(Math.min(batch, size - taken.length));
          // Whatever is left scores strictly below the last one taken.
          const last = scores[part.at(-1)!]!;
          const left = [...scores.keys()].filter((i) => !taken.includes(i) && !part.includes(i));
          for (const i of left) expect(scores[i]!).toBeLessThan(last);
          taken.push(...part);
          batch *= 3;
        }
        expect([...taken].sort((x, y) => x - y)).toEqual([...scores.keys()]);
        if (distinct !== 3)
          for (let i = 1; i < taken.length; i++) expect(scores[taken[i - 1]!]!).toBeGreaterThanOrEqual(scores[taken[i]!]!);
      }
    }
  });
});
