import { newId } from '../ids.ts';
import type { JobRequest } from '../outbox/enqueue.ts';

// Each org's continuous background work on its memories is done by one long-lived workflow, the org's
// curator (workflows/memory-curator.ts). Writes tell it which memories changed through the outbox: the
// relay merges the rows of one org into one signal (signal-with-start), so a burst of saves costs a few
// signals, not a workflow start per memory.
export const CURATE_JOB = 'curate';
export const curatorWorkflowId = (orgId: string): string => `memory-curator-${orgId}`;

// What one signal carries: ids only (the activity reads the rows), and whether to scan the whole org for
// memories without a current vector (after a change of model, or when the backlog overflowed).
export interface CurateRequest {
  ids: string[];
  backfill: boolean;
}

// One outbox row; its key is unique per row because rows are delivered as signals, not as starts.
export function curateJob(orgId: string, ids: string[], backfill = false): JobRequest {
  const request: CurateRequest = { ids, backfill };
  return {
    orgId,
    jobType: CURATE_JOB,
    jobKey: `curate-${newId()}`,
    args: [request],
    description: backfill ? 'embed every memory of the org that lacks a current vector' : `embed ${ids.length} changed memories`,
  };
}

// The jobs of a batch of saved memories: one per org.
export function curateJobsOf(saved: { orgId: string; memoryId: string }[]): JobRequest[] {
  const byOrg = new Map<string, string[]>();
  for (const { orgId, memoryId } of saved) byOrg.set(orgId, [...(byOrg.get(orgId) ?? []), memoryId]);
  return [...byOrg].map(([orgId, ids]) => curateJob(orgId, ids));
}

// Several requests to one curator as one.
export const mergeCurateRequests = (requests: CurateRequest[]): CurateRequest => ({
  ids: [...new Set(requests.flatMap((r) => r.ids))],
  backfill: requests.some((r) => r.backfill),
});
