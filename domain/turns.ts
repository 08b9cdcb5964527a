// Work waiting for a shared resource (the local model's sessions, the API's search slots), a line per owner, taken
// an owner at a time in turn. An owner with much waiting (an org whose curator catches up on thousands of memories)
// holds up another owner's next item by at most one item of its own, not by all it has queued: with one line for
// everyone, a save in a quiet org waited behind every pass the busy orgs had queued. Given how many items each owner
// has under way, the turn goes to an owner with the fewest: a busy owner whose items fill the resource then waits
// for the others' next items, not they for its. Each owner's items keep their order.
export class Turns<T> {
  // In turn order: the owner served next comes first, and goes to the back once served.
  readonly #lines = new Map<string, T[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  // How many items of this owner wait.
  waiting(owner: string): number {
    return this.#lines.get(owner)?.length ?? 0;
  }

  // An owner with nothing waiting joins the back of the turn order.
  push(owner: string, item: T): void {
    const line = this.#lines.get(owner);
    if (line) line.push(item);
    else this.#lines.set(owner, [item]);
    this.#size += 1;
  }

  // The next item of the owner whose turn it is: the first in turn order among those with the fewest items under way,
  // of the owners `may` lets go now.
  shift(underWay?: (owner: string) => number, may?: (owner: string) => boolean): T | undefined {
    let owner: string | undefined;
    let fewest = Infinity;
    for (const candidate of this.#lines.keys()) {
      if (may && !may(candidate)) continue;
      const running = underWay?.(candidate) ?? 0;
      if (running < fewest) [owner, fewest] = [candidate, running];
      if (fewest === 0) break;
    }
    if (owner === undefined) return undefined;
    const line = this.#lines.get(owner)!;
    const item = line.shift()!;
    this.#lines.delete(owner);
    if (line.length > 0) this.#lines.set(owner, line);
    this.#size -= 1;
    return item;
  }

  // Takes out one waiting item (one that gave up waiting); false if it is not waiting.
  remove(owner: string, item: T): boolean {
    const line = this.#lines.get(owner);
    const at = line?.indexOf(item) ?? -1;
    if (!line || at < 0) return false;
    line.splice(at, 1);
    if (line.length === 0) this.#lines.delete(owner);
    this.#size -= 1;
    return true;
  }

  // Every waiting item, taken out.
  drain(): T[] {
    const items = [...this.#lines.values()].flat();
    this.#lines.clear();
    this.#size = 0;
    return items;
  }
}
