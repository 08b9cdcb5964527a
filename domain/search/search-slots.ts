import { availableParallelism } from 'node:os';
import { FairSlots } from '../fair-slots.ts';
import type { OrgActivity } from '../org-activity.ts';

// Every search of this process's requests (single, bulk, MCP's, mem0's, similar) runs in one of these slots, the
// orgs served in turn (fair-slots.ts): one org's flood makes another's search wait for one slot at most. A search
// is CPU-bound in the database, so more at once than there are cores only adds switching, and slows every search
// under way, another org's included. A hybrid search holds two connections (three while it embeds fresh memories),
// so searches never take more than about half of the pool, and saves and credential lookups always find a free
// connection.
export const searchSlotCount = (poolMax: number): number =>
  Math.max(1, Math.min(Math.floor(poolMax / 4), Math.max(2, availableParallelism())));

// Searches that may wait for a slot, per slot: an org's own (past that, 429 for that org), and all orgs' (503).
const SEARCHES_WAITING_PER_ORG_PER_SLOT = 16;
const SEARCHES_WAITING_PER_SLOT = 64;

// Orgs share the slots as OrgActivity.shares says: while another org is busy, an org leaves it a slot, and a flood
// is paced to `busyShare` of the slots' time.
export function searchSlots(slots: number, activity: OrgActivity, busyShare = 1): FairSlots {
  return new FairSlots(slots, SEARCHES_WAITING_PER_ORG_PER_SLOT, SEARCHES_WAITING_PER_SLOT, 'searches', activity.shares(slots, busyShare));
}
