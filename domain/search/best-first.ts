// Candidates handed out best first, in batches. Sorting half a million scores would cost more than scoring
// them, and most searches need only the first few, so the best are selected (quickselect on a copy of the
// scores, then one pass) and sorted in prefixes that at least double each time.
export class BestFirst {
  readonly #scores: Float64Array;
  readonly #positions: Int32Array;
  #sorted = 0;
  #taken = 0;

  constructor(scores: Float64Array) {
    this.#scores = scores;
    this.#positions = new Int32Array(scores.length);
    for (let i = 0; i < scores.length; i++) this.#positions[i] = i;
  }

  get done(): boolean {
    return this.#taken >= this.#positions.length;
  }

  // The positions of the next `count` best scores, and past them every position tied with the last, so that
  // whatever is left scores strictly below whatever was taken.
  take(count: number): Int32Array {
    const length = this.#positions.length;
    const from = this.#taken;
    let end = Math.min(length, from + count);
    this.#sortTo(end);
    while (end < length) {
      this.#sortTo(end + 1);
      if (this.#scores[this.#positions[end]!] !== this.#scores[this.#positions[end - 1]!]) break;
      end += 1;
    }
    this.#taken = end;
    return this.#positions.subarray(from, end);
  }

  // Every position not taken yet, in no particular order.
  rest(): Int32Array {
    const from = this.#taken;
    this.#taken = this.#positions.length;
    return this.#positions.subarray(from);
  }

  // Sorts at least the positions up to `to`: those scoring at least the (to - sorted)-th best score of the
  // rest, all of its ties included, are moved to the front of the rest and sorted.
  #sortTo(to: number): void {
    if (to <= this.#sorted) return;
    const scores = this.#scores;
    const rest = this.#positions.subarray(this.#sorted);
    const wanted = Math.max(to, 2 * this.#sorted) - this.#sorted;
    let front = rest.length;
    if (wanted < rest.length) {
      const values = new Float64Array(rest.length);
      for (let i = 0; i < rest.length; i++) values[i] = scores[rest[i]!]!;
      const threshold = kthLargest(values, wanted);
      front = 0;
      for (let i = 0; i < rest.length; i++) {
        const p = rest[i]!;
        if (scores[p]! >= threshold) {
          rest[i] = rest[front]!;
          rest[front++] = p;
        }
      }
    }
    rest.subarray(0, front).sort((a, b) => scores[b]! - scores[a]!);
    this.#sorted += front;
  }
}

// The k-th largest of `values` (1-based), by quickselect on the values themselves (which it reorders).
export function kthLargest(values: Float64Array, k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i += 1;
      while (values[j]! < pivot) j -= 1;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i += 1;
        j -= 1;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return values[target]!;
  }
  return values[target]!;
}
