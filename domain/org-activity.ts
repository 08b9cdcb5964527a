import type { SlotShares } from './fair-slots.ts';

// How long an org still counts as active after its last request ended: a caller's next request follows its last
// within moments, and a flood let into every slot in that gap would still hold them when it comes.
export const ACTIVE_LINGER_MS = 500;

// The orgs with work under way in this process (the API's requests; the worker's activities that name their org), so
// that work shared by orgs (the search and batch slots, an export's pages) can leave room for another org's while
// there is any: a save waits for a core behind whatever else runs.
export class OrgActivity {
  readonly #underWay = new Map<string, number>();
  // One pace per org for every set of slots built from here: a flood's searches and batches share its share.
  readonly #pacedUntil = new Map<string, number>();
  // Orgs that began a request since the last `takeSeen` (kept from the first call on, so that a process that never
  // takes them keeps none): one that came and went between two looks still counts.
  #seen: Set<string> | undefined;
  // When each org with nothing under way last ended a request, while it lingers.
  readonly #leftAt = new Map<string, number>();
  readonly #lingerMs: number;

  constructor(lingerMs = ACTIVE_LINGER_MS) {
    this.#lingerMs = lingerMs;
  }

  // Counts a request of the org until the returned function is called.
  enter(orgId: string): () => void {
    this.#underWay.set(orgId, (this.#underWay.get(orgId) ?? 0) + 1);
    this.#seen?.add(orgId);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const n = this.#underWay.get(orgId)! - 1;
      if (n > 0) return void this.#underWay.set(orgId, n);
      this.#underWay.delete(orgId);
      if (this.#lingerMs === 0) return;
      this.#leftAt.set(orgId, performance.now());
      this.#forgetPastLingers();
    };
  }

  // How orgs share `slots` while others are busy: while another org has a request under way (a save, a list, a
  // search) or lingers after one, an org takes all slots but one, leaving one to the others; and while such an org
  // has no call waiting, an org whose calls wait for a slot (a flood) uses at most `busyShare` of the slots' time,
  // since its one slot alone would still keep a core busy beside the other org's requests. Orgs that all flood are
  // not paced, so the slots are never left idle for want of a quiet org. An org alone in the process uses every slot.
  shares(slots: number, busyShare: number): SlotShares {
    return {
      slotsFor: (orgId) => (this.othersActive(orgId) ? Math.max(1, slots - 1) : slots),
      paced: (orgId, queued) => this.othersActive(orgId, (other) => !queued(other)),
      share: busyShare,
      pacedUntil: this.#pacedUntil,
    };
  }

  // The orgs with a request under way now or begun since the last call.
  takeSeen(): string[] {
    const orgs = new Set([...(this.#seen ?? []), ...this.#underWay.keys()]);
    this.#seen = new Set();
    return [...orgs];
  }

  // Whether an org other than this one has a request under way or ended one within the linger (one that `where`
  // accepts, if given).
  othersActive(orgId: string, where: (other: string) => boolean = () => true): boolean {
    for (const other of this.#underWay.keys()) if (other !== orgId && where(other)) return true;
    this.#forgetPastLingers();
    for (const other of this.#leftAt.keys()) if (other !== orgId && where(other)) return true;
    return false;
  }

  // Leaves in #leftAt only the orgs that linger now: nothing under way, and their linger not yet passed.
  #forgetPastLingers(): void {
    const now = performance.now();
    for (const [orgId, left] of this.#leftAt) {
      if (this.#underWay.has(orgId) || now - left >= this.#lingerMs) this.#leftAt.delete(orgId);
    }
  }
}
