// Candidates handed out best first, in batches. Sorting half a million scores would cost more than scoring
// them, and most searches need only the first few, so the best are selected (quickselect) and sorted in
// prefixes that at least double each time.
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

  #sortTo(to: number): void {
    if (to <= this.#sorted) return;
    const end = Math.min(this.#positions.length, Math.max(to, 2 * this.#sorted));
    const scores = this.#scores;
    selectBest(this.#positions, scores, this.#sorted, this.#positions.length, end);
    this.#positions.subarray(this.#sorted, end).sort((a, b) => scores[b]! - scores[a]!);
    this.#sorted = end;
  }
}

// Quickselect (Hoare's partition): rearranges positions[from, to) so that positions[from, k) hold the best
// scores of the range, in no particular order.
function selectBest(positions: Int32Array, scores: Float64Array, from: number, to: number, k: number): void {
  let lo = from;
  let hi = to - 1;
  while (lo < hi && k > lo && k <= hi) {
    const pivot = scores[positions[(lo + hi) >>> 1]!]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (scores[positions[i]!]! > pivot) i += 1;
      while (scores[positions[j]!]! < pivot) j -= 1;
      if (i <= j) {
        const t = positions[i]!;
        positions[i] = positions[j]!;
        positions[j] = t;
        i += 1;
        j -= 1;
      }
    }
    if (k <= j + 1) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}
