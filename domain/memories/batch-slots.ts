import { FairSlots } from '../fair-slots.ts';
import type { OrgActivity } from '../org-activity.ts';

// Batch writes (saving or updating up to 500 memories in one call, mem0's batch update) of this process's requests
// run in these slots, the orgs in turn, as the searches do (search-slots.ts): a batch is one transaction that keeps a
// core busy in the database for its rows, and another org's save waits for a core at each of its steps. Orgs share
// them as OrgActivity.shares says, so one org's stream of batches is paced beside another org's saves.
// Batches that may wait, per slot: an org's own (past that, 429 for that org; each holds its body), and all orgs'.
export const BATCHES_WAITING_PER_ORG_PER_SLOT = 4;
const BATCHES_WAITING_PER_SLOT = 32;

export function batchSlots(slots: number, activity: OrgActivity, busyShare: number): FairSlots {
  const shares = activity.shares(slots, busyShare);
  return new FairSlots(slots, BATCHES_WAITING_PER_ORG_PER_SLOT, BATCHES_WAITING_PER_SLOT, 'batch writes', shares);
}
