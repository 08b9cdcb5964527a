import { AppError, serverBusy } from './errors.ts';
import { Turns } from './turns.ts';

// How long an org whose queue is full should wait before asking again.
export const QUEUE_FULL_RETRY_AFTER_SECONDS = 1;

// Work of many orgs sharing a few slots, so that one org's flood holds up another org's call by at most one call
// of its own. While a slot is free, a call starts at once, whoever makes it (one org alone may use every slot);
// while all are busy, calls wait in a line per org, and a freed slot goes to the org whose turn it is (turns.ts).
// An org with `maxWaitingPerOrg` calls waiting already is refused (429, its own doing); past `maxWaiting` calls
// waiting in all, any org is refused (503 server_busy: this process is behind).
export class FairSlots {
  readonly slots: number;
  readonly #maxWaitingPerOrg: number;
  readonly #maxWaiting: number;
  // What the calls are, for the refusals' messages ("searches").
  readonly #what: string;
  readonly #waiting = new Turns<() => void>();
  #running = 0;

  constructor(slots: number, maxWaitingPerOrg: number, maxWaiting: number, what: string) {
    this.slots = slots;
    this.#maxWaitingPerOrg = maxWaitingPerOrg;
    this.#maxWaiting = maxWaiting;
    this.#what = what;
  }

  run<T>(orgId: string, fn: () => Promise<T>): Promise<T> {
    if (this.#running < this.slots && this.#waiting.size === 0) return this.#start(fn);
    const waiting = this.#waiting.waiting(orgId);
    if (waiting >= this.#maxWaitingPerOrg) {
      const detail = `${waiting} ${this.#what} of this organization are waiting already; retry in ${QUEUE_FULL_RETRY_AFTER_SECONDS} s`;
      return Promise.reject(new AppError('rate_limited', 'rate-limited', detail, { retry_after: QUEUE_FULL_RETRY_AFTER_SECONDS }));
    }
    if (this.#waiting.size >= this.#maxWaiting) return Promise.reject(serverBusy(`${this.#waiting.size} ${this.#what} are waiting already`));
    return new Promise<T>((resolve, reject) => this.#waiting.push(orgId, () => void this.#start(fn).then(resolve, reject)));
  }

  async #start<T>(fn: () => Promise<T>): Promise<T> {
    this.#running += 1;
    try {
      return await fn();
    } finally {
      this.#running -= 1;
      while (this.#running < this.slots && this.#waiting.size > 0) this.#waiting.shift()!();
    }
  }
}
