import type { CuratorTuning } from './tuning.ts';

type BurstTuning = Pick<CuratorTuning, 'burstPerSecond' | 'burstWindowMs' | 'burstOnsetMs' | 'relayIntervalMs'>;

// Tells a burst of saves from a steady stream, from when ids arrived (workflow time) and how many. The model cannot
// keep up with a burst anyway, and embedding at full speed beside the API takes the CPU the saves need, so during a
// burst the curator embeds slowly and catches up when it ends. Two signs: more ids over the window than
// burstPerSecond allows, or the latest signal alone arriving at twice that rate (a burst seen at its onset, before
// the window fills).
export class BurstDetector {
  readonly #tuning: BurstTuning;
  readonly #arrivals: { at: number; count: number }[] = [];

  constructor(tuning: BurstTuning) {
    this.#tuning = tuning;
  }

  arrived(at: number, count: number): void {
    if (count > 0) this.#arrivals.push({ at, count });
  }

  bursting(now: number): boolean {
    const { burstPerSecond, burstWindowMs } = this.#tuning;
    while (this.#arrivals.length > 0 && this.#arrivals[0]!.at < now - burstWindowMs) this.#arrivals.shift();
    const inWindow = this.#arrivals.reduce((sum, a) => sum + a.count, 0);
    return inWindow > (burstPerSecond * burstWindowMs) / 1000 || this.#onsetRate(now) > 2 * burstPerSecond;
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
