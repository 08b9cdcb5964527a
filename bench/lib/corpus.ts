import { loadCisi, loadCranfield } from '../quality/collections.ts';

// Realistic English text for synthetic memories: sentences of the Cranfield and CISI abstracts, recombined.
// A seeded generator keeps runs comparable.
export class Corpus {
  readonly sentences: string[];
  readonly queries: string[];
  #state: number;

  constructor(dataDir: string, seed = 42) {
    const collections = [loadCranfield(dataDir), loadCisi(dataDir)];
    this.sentences = collections.flatMap((c) =>
      c.docs.flatMap((d) =>
        d.text
          .split(/(?<=[.?!])\s+/)
          .map((s) => s.replace(/\s+/g, ' ').trim())
          .filter((s) => s.length > 30),
      ),
    );
    this.queries = collections.flatMap((c) => c.queries.map((q) => q.text.replace(/\s+/g, ' ').trim()));
    this.#state = seed;
  }

  // Starts another sequence from here on (what was drawn before, such as a generator's vocabulary, stays).
  reseed(seed: number): void {
    this.#state = seed;
  }

  random(): number {
    // mulberry32
    this.#state = (this.#state + 0x6d2b79f5) | 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  // About 80 distinct terms: three to six sentences.
  memory(): string {
    const n = 3 + Math.floor(this.random() * 4);
    return Array.from({ length: n }, () => this.pick(this.sentences)).join(' ');
  }

  // A short agent-style query: two or three words of a real query.
  shortQuery(): string {
    const words = this.pick(this.queries)
      .split(' ')
      .filter((w) => /^[a-z]{4,}$/i.test(w));
    const start = Math.floor(this.random() * Math.max(1, words.length - 3));
    return words.slice(start, start + 2 + Math.floor(this.random() * 2)).join(' ') || 'pressure';
  }
}
