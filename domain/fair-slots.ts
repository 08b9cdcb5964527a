import { AppError, serverBusy } from './errors.ts';
import { Turns } from './turns.ts';

// How long an org whose queue is full should wait before asking again.
const QUEUE_FULL_RETRY_AFTER_SECONDS = 1;

// Work of many orgs sharing a few slots, so that one org's flood holds up another org's call by at most one call
// of its own. While a slot is free, a call starts at once, whoever makes it (one org alone may use every slot);
// while all are busy, calls wait in a line per org, and a freed slot goes to the org whose turn it is among those
// with the fewest calls under way (turns.ts).
// An org with `maxWaitingPerOrg` calls waiting already is refused (429, its own doing); past `maxWaiting` calls
// waiting in all, any org is refused (503 server_busy: this process is behind). `slotsFor` may hold an org to fewer
// slots than all (search-slots.ts: while other orgs are busy); its calls past that wait, and a slot it cannot take
// stays free until one of its calls ends.
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
  readonly #slotsFor: (orgId: string) => number;

  constructor(slots: number, maxWaitingPerOrg: number, maxWaiting: number, what: string, slotsFor?: (orgId: string) => number) {
    this.slots = slots;
    this.#slotsFor = slotsFor ?? (() => slots);
    this.#maxWaitingPerOrg = maxWaitingPerOrg;
    this.#maxWaiting = maxWaiting;
    this.#what = what;
  }

  run<T>(orgId: string, fn: () => Promise<T>): Promise<T> {
    // Calls that wait while a slot is free are held to their org's share; any that may start now go first.
    this.#dispatch();
    if (this.#running < this.slots && this.#waiting.waiting(orgId) === 0 && this.#mayStart(orgId)) return this.#start(orgId, fn);
    const waiting = this.#waiting.waiting(orgId);
    if (waiting >= this.#maxWaitingPerOrg) {
      const detail = `${waiting} ${this.#what} of this organization are waiting already; retry in ${QUEUE_FULL_RETRY_AFTER_SECONDS} s`;
      return Promise.reject(new AppError('rate_limited', 'rate-limited', detail, { retry_after: QUEUE_FULL_RETRY_AFTER_SECONDS }));
    }
    if (this.#waiting.size >= this.#maxWaiting)
      return Promise.reject(serverBusy(`${this.#waiting.size} ${this.#what} are waiting already`));
    return new Promise<T>((resolve, reject) => this.#waiting.push(orgId, () => void this.#start(orgId, fn).then(resolve, reject)));
  }

  // Whether another call of this org may start now, as far as its own share goes; `ending` calls no longer count.
  #mayStart(orgId: string, ending = 0): boolean {
    return (this.#underWay.get(orgId) ?? 0) - ending < this.#slotsFor(orgId);
  }

  // Starts waiting calls while slots are free, an org at a time in turn (turns.ts), each within its org's share. The
  // org whose call `ended` still counts it while the slot is given: among equals, another org goes first.
  #dispatch(ended?: string): void {
    const underWay = (owner: string) => this.#underWay.get(owner) ?? 0;
    while (this.#running < this.slots) {
      const next = this.#waiting.shift(underWay, (owner) => this.#mayStart(owner, owner === ended ? 1 : 0));
      if (!next) return;
      next();
    }
  }

  async #start<T>(orgId: string, fn: () => Promise<T>): Promise<T> {
    this.#running += 1;
    this.#underWay.set(orgId, (this.#underWay.get(orgId) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      this.#running -= 1;
      this.#dispatch(orgId);
      const left = this.#underWay.get(orgId)! - 1;
      if (left > 0) this.#underWay.set(orgId, left);
      else this.#underWay.delete(orgId);
    }
  }
}
