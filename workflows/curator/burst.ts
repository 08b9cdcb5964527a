import type { CuratorTuning } from './tuning.ts';

type BurstTuning = Pick<CuratorTuning, 'burstPerSecond' | 'burstWindowMs' | 'burstOnsetMs' | 'relayIntervalMs'>;

// Tells a burst of saves from a steady stream, from when ids arrived (workflow time) and how many. The model cannot
// keep up with a burst anyway, and embedding at full speed beside the API takes the CPU the saves need, so during a
// burst the curator embeds slowly and catches up when it ends. Three signs: more ids over the window than
// burstPerSecond allows; the latest signal alone arriving at twice that rate (a burst seen at its onset, before the
// window fills); or, while signals keep coming, the ids of the window's signals after its first arriving faster than
// burstPerSecond since that first one (a stream a little over the rate, seen at its second signal rather than once
// the window holds its count: until then both lanes would take batches and slow the saves further).
export class BurstDetector {
  readonly #tuning: BurstTuning;
  readonly #arrivals: { at: number; count: number }[] = [];
  // The third sign: runs recorded before it keep to the first two on replay (memory-curator.ts).
  readonly #sinceFirst: boolean;

  constructor(tuning: BurstTuning, sinceFirst = true) {
    this.#tuning = tuning;
    this.#sinceFirst = sinceFirst;
  }

  arrived(at: number, count: number): void {
    if (count > 0) this.#arrivals.push({ at, count });
  }

  bursting(now: number): boolean {
    const { burstPerSecond, burstWindowMs } = this.#tuning;
    while (this.#arrivals.length > 0 && this.#arrivals[0]!.at < now - burstWindowMs) this.#arrivals.shift();
    const inWindow = this.#arrivals.reduce((sum, a) => sum + a.count, 0);
    if (inWindow > (burstPerSecond * burstWindowMs) / 1000 || this.#onsetRate(now) > 2 * burstPerSecond) return true;
    return this.#sinceFirst && this.#rateSinceFirst(now, inWindow) > burstPerSecond;
  }

  // The ids of the window's signals after its first, a second since that first one (at least a relay interval),
  // while the latest is recent; 0 with fewer than two signals, since one alone does not tell when its ids were saved.
  #rateSinceFirst(now: number, inWindow: number): number {
    const { burstOnsetMs, relayIntervalMs } = this.#tuning;
    const [first, last] = [this.#arrivals[0], this.#arrivals.at(-1)];
    if (!first || !last || first === last || last.at < now - burstOnsetMs) return 0;
    return ((inWindow - first.count) * 1000) / Math.max(relayIntervalMs, last.at - first.at);
  }

  // The latest signal's ids a second since the signal before it (over the whole window when it came first, and at
  // least a relay interval apart), while it is recent. A relay that signals late brings more ids after a longer
  // interval, so its rate stays that of the saves.
  #onsetRate(now: number): number {
    const { burstOnsetMs, burstWindowMs, relayIntervalMs } = this.#tuning;
    const last = this.#arrivals.at(-1);
    if (!last || last.at < now - burstOnsetMs) return 0;
    const interval = Math.max(relayIntervalMs, last.at - (this.#arrivals.at(-2)?.at ?? last.at - burstWindowMs));
    return (last.count * 1000) / interval;
  }
}
