import { rateLimited, serverBusy, type AppError } from './errors.ts';
import { withQueryTime } from './sql.ts';
import { Turns } from './turns.ts';

// How long an org whose queue is full should wait before asking again.
const QUEUE_FULL_RETRY_AFTER_SECONDS = 1;
// How far ahead a paced org's next start may be before its next call is refused at once rather than held: a caller
// whose calls come one after another (an MCP request's) is told when to come back.
export const PACE_AHEAD_MAX_MS = 2_000;
// How long a call may wait in its line: past it, the call is refused rather than left waiting (the calls ahead of it
// in its org's line each put its pace off further). A paced org is told when to come back (429), any other that this
// process is behind (503).
export const WAIT_MAX_MS = 5_000;

// How orgs share the slots beyond taking turns (OrgActivity.shares builds it for the search and batch slots).
export interface SlotShares {
  // How many slots the org may hold at once.
  slotsFor(orgId: string): number;
  // Whether the org's waiting calls are held to `share` of the slots' time: `queued` tells which orgs have calls
  // waiting.
  paced(orgId: string, queued: (orgId: string) => boolean): boolean;
  // The share of all the slots' time a paced org may use (0 to 1].
  share: number;
  // When each paced org's next waiting call may start (performance.now()): slots given the same map pace an org by
  // its time in all of them together.
  pacedUntil?: Map<string, number>;
}

const everySlot = (slots: number): SlotShares => ({ slotsFor: () => slots, paced: () => false, share: 1 });

// Work of many orgs sharing a few slots, so that one org's flood holds up another org's call by at most one call
// of its own. While a slot is free, a call starts at once, whoever makes it (one org alone may use every slot);
// while all are busy, calls wait in a line per org, and a freed slot goes to the org whose turn it is among those
// with the fewest calls under way (turns.ts).
// An org with `waitingPerOrgPerSlot` calls per slot waiting already is refused (429, its own doing); past
// `waitingPerSlot` per slot waiting in all, any org is refused (503 server_busy: this process is behind).
// `shares` may hold an org to fewer slots than all (its calls past that wait, and a slot it cannot take stays free
// until one of its calls ends), and pace an org's waiting calls, so that they use at most `share` of all the slots'
// time: each call's time in its slot (or its statements' time, summed over the connections it held, if longer) puts
// off the org's next waiting call by that time over the share.
export class FairSlots {
  readonly slots: number;
  readonly #maxWaitingPerOrg: number;
  readonly #maxWaiting: number;
  // What the calls are, for the refusals' messages ("searches").
  readonly #what: string;
  readonly #shares: SlotShares;
  readonly #waiting = new Turns<() => void>();
  // Calls under way, in all and per org.
  #running = 0;
  readonly #underWay = new Map<string, number>();
  readonly #pacedUntil: Map<string, number>;
  // Wakes the dispatch when a paced org's next call may start.
  #wake: NodeJS.Timeout | undefined;

  constructor(slots: number, waitingPerOrgPerSlot: number, waitingPerSlot: number, what: string, shares = everySlot(slots)) {
    this.slots = slots;
    this.#shares = shares;
    this.#pacedUntil = shares.pacedUntil ?? new Map();
    this.#maxWaitingPerOrg = waitingPerOrgPerSlot * slots;
    this.#maxWaiting = waitingPerSlot * slots;
    this.#what = what;
  }

  run<T>(orgId: string, fn: () => Promise<T>): Promise<T> {
    // Calls that wait while a slot is free are held to their org's share; any that may start now go first.
    this.#dispatch();
    if (this.#running < this.slots && this.#waiting.waiting(orgId) === 0 && this.#mayStart(orgId)) return this.#start(orgId, fn);
    const ahead = this.#paceAhead(orgId);
    if (ahead > PACE_AHEAD_MAX_MS) return Promise.reject(this.#pacedRefusal(ahead));
    const waiting = this.#waiting.waiting(orgId);
    if (waiting >= this.#maxWaitingPerOrg) {
      const what = `${waiting} ${this.#what} of this organization are waiting already`;
      return Promise.reject(rateLimited('rate-limited', what, QUEUE_FULL_RETRY_AFTER_SECONDS));
    }
    if (this.#waiting.size >= this.#maxWaiting)
      return Promise.reject(serverBusy(`${this.#waiting.size} ${this.#what} are waiting already`));
    return new Promise<T>((resolve, reject) => {
      const begin = () => {
        clearTimeout(deadline);
        void this.#start(orgId, fn).then(resolve, reject);
      };
      const deadline = setTimeout(() => {
        if (!this.#waiting.remove(orgId, begin)) return;
        const ahead = this.#paceAhead(orgId);
        const waited = `a call waited ${WAIT_MAX_MS / 1000} s for one of the ${this.#what}' slots`;
        reject(ahead > 0 ? this.#pacedRefusal(ahead) : serverBusy(waited));
        // Its org may no longer have calls waiting, which changes who is paced.
        this.#dispatch();
      }, WAIT_MAX_MS);
      deadline.unref();
      this.#waiting.push(orgId, begin);
      this.#wakeWhenPaced();
    });
  }

  #pacedRefusal(ahead: number): AppError {
    const retryAfter = Math.max(1, Math.ceil(ahead / 1000));
    return rateLimited('rate-limited', `this organization's ${this.#what} are paced beside other organizations' work`, retryAfter);
  }

  // Time the org's calls spent on the slots' behalf outside them (its searches' model passes), counted as slot time.
  charge(orgId: string, ms: number): void {
    if (this.#shares.paced(orgId, this.#queued)) this.#putOff(orgId, performance.now(), ms);
  }

  // Puts off the org's next waiting call by `ms` of slot time over its share, from `from` or from when its last
  // put-off ends, whichever is later.
  #putOff(orgId: string, from: number, ms: number): void {
    const after = Math.max(this.#pacedUntil.get(orgId) ?? 0, from);
    this.#pacedUntil.set(orgId, after + ms / (this.#shares.share * this.slots));
  }

  readonly #queued = (orgId: string): boolean => this.#waiting.waiting(orgId) > 0;

  // Whether another call of this org may start now, as far as its own share goes; `ending` calls no longer count. A
  // pace still running holds a call that found nothing of its org waiting too (a flood back from its Retry-After), while
  // an org that never queued has none.
  #mayStart(orgId: string, ending = 0): boolean {
    if (this.#paceAhead(orgId) > 0) return false;
    return (this.#underWay.get(orgId) ?? 0) - ending < this.#shares.slotsFor(orgId);
  }

  // How long until the org's next call may start by its pace (0 when it is not paced now).
  #paceAhead(orgId: string): number {
    const ahead = (this.#pacedUntil.get(orgId) ?? 0) - performance.now();
    return ahead > 0 && this.#shares.paced(orgId, this.#queued) ? ahead : 0;
  }

  #isPaced(orgId: string): boolean {
    return this.#queued(orgId) && this.#shares.paced(orgId, this.#queued);
  }

  #wakeWhenPaced(): void {
    if (this.#wake) return;
    const now = performance.now();
    let soonest = Infinity;
    for (const [orgId, until] of this.#pacedUntil) {
      if (until <= now) this.#pacedUntil.delete(orgId);
      else if (this.#queued(orgId)) soonest = Math.min(soonest, until);
    }
    if (soonest === Infinity) return;
    this.#wake = setTimeout(() => {
      this.#wake = undefined;
      this.#dispatch();
    }, Math.ceil(soonest - now));
    this.#wake.unref();
  }

  // Starts waiting calls while slots are free, an org at a time in turn (turns.ts), each within its org's share. The
  // org whose call `ended` still counts it while the slot is given: among equals, another org goes first.
  #dispatch(ended?: string): void {
    const underWay = (owner: string) => this.#underWay.get(owner) ?? 0;
    while (this.#running < this.slots) {
      const next = this.#waiting.shift(underWay, (owner) => this.#mayStart(owner, owner === ended ? 1 : 0));
      if (!next) return this.#wakeWhenPaced();
      next();
    }
  }

  async #start<T>(orgId: string, fn: () => Promise<T>): Promise<T> {
    this.#running += 1;
    this.#underWay.set(orgId, (this.#underWay.get(orgId) ?? 0) + 1);
    const started = performance.now();
    let statements = 0;
    try {
      return await withQueryTime(fn, (ms) => (statements = ms));
    } finally {
      // Its time in the slot, or its statements' time if longer: a call on two connections at once costs the
      // database twice its wall time.
      if (this.#isPaced(orgId)) this.#putOff(orgId, started, Math.max(performance.now() - started, statements));
      this.#running -= 1;
      this.#dispatch(orgId);
      const left = this.#underWay.get(orgId)! - 1;
      if (left > 0) this.#underWay.set(orgId, left);
      else this.#underWay.delete(orgId);
    }
  }
}
