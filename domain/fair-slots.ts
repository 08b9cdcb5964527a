import { AppError, serverBusy } from './errors.ts';
import { Turns } from './turns.ts';

// How long an org whose queue is full should wait before asking again.
const QUEUE_FULL_RETRY_AFTER_SECONDS = 1;

// Work of many orgs sharing a few slots, so that one org's flood holds up another org's call by at most one call
// of its own. While a slot is free, a call starts at once, whoever makes it (one org alone may use every slot);
// while all are busy, calls wait in a line per org, and a freed slot goes to the org whose turn it is among those
// with the fewest calls under way (turns.ts).
// An org with `maxWaitingPerOrg` calls waiting already is refused (429, its own doing); past `maxWaiting` calls
// waiting in all, any org is refused (503 server_busy: this process is behind).
export class FairSlots {
  readonly slots: number;
  readonly #maxWaitingPerOrg: number;
  readonly #maxWaiting: number;
  // What the calls are, for the refusals' messages ("searches").
  readonly #what: string;
  readonly #waiting = new Turns<() => void>();
  // Calls under way, in all and per org.
  #running = 0;
  readonly #underWay = new Map<string, number>();

  constructor(slots: number, maxWaitingPerOrg: number, maxWaiting: number, what: string) {
    this.slots = slots;
    this.#maxWaitingPerOrg = maxWaitingPerOrg;
    this.#maxWaiting = maxWaiting;
    this.#what = what;
  }

  run<T>(orgId: string, fn: () => Promise<T>): Promise<T> {
    if (this.#running < this.slots && this.#waiting.size === 0) return this.#start(orgId, fn);
    const waiting = this.#waiting.waiting(orgId);
    if (waiting >= this.#maxWaitingPerOrg) {
      const detail = `${waiting} ${this.#what} of this organization are waiting already; retry in ${QUEUE_FULL_RETRY_AFTER_SECONDS} s`;
      return Promise.reject(new AppError('rate_limited', 'rate-limited', detail, { retry_after: QUEUE_FULL_RETRY_AFTER_SECONDS }));
    }
    if (this.#waiting.size >= this.#maxWaiting)
      return Promise.reject(serverBusy(`${this.#waiting.size} ${this.#what} are waiting already`));
    return new Promise<T>((resolve, reject) => this.#waiting.push(orgId, () => void this.#start(orgId, fn).then(resolve, reject)));
  }

  async #start<T>(orgId: string, fn: () => Promise<T>): Promise<T> {
    this.#running += 1;
    this.#underWay.set(orgId, (this.#underWay.get(orgId) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      this.#running -= 1;
      // The org whose call ended still counts it while the slot is given: among equals, another org goes first.
      const underWay = (owner: string) => this.#underWay.get(owner) ?? 0;
      while (this.#running < this.slots && this.#waiting.size > 0) this.#waiting.shift(underWay)!();
      const left = this.#underWay.get(orgId)! - 1;
      if (left > 0) this.#underWay.set(orgId, left);
      else this.#underWay.delete(orgId);
    }
  }
}
