import { newId } from '../ids.ts';
import type { JobRequest } from '../outbox/enqueue.ts';

// Each org's continuous background work on its memories is done by one long-lived workflow, the org's
// curator (workflows/memory-curator.ts): embedding every saved and edited memory, and the LLM enrichment
// (entities, synopsis, facts) some of them ask for. Writes tell it through the outbox: the relay merges the
// rows of one org into one signal (signal-with-start), so a burst of saves costs a few signals, not a
// workflow start per memory.
export const CURATE_JOB = 'curate';
export const curatorWorkflowId = (orgId: string): string => `memory-curator-${orgId}`;

// The enrichments a memory can ask for (domain/enrichment/tasks.ts says what each asks of the model).
// `extract`: the conversation extraction whose last message the memory is (domain/extraction).
export const ENRICHMENTS = ['entities', 'synopsis', 'facts', 'extract'] as const;
export type Enrichment = (typeof ENRICHMENTS)[number];

// One memory's enrichment, as the curator receives it.
export interface EnrichmentArgs {
  orgId: string;
  memoryId: string;
  tasks: Enrichment[];
  // The content the work was scheduled for: a result for older content is not stored.
  contentHash: string;
  escrowId: string | null;
}

// What one signal carries: ids only (the activities read the rows), whether to scan the whole org for
// memories without a current vector (after a change of model, or when the backlog overflowed), and the
// enrichments to run.
export interface CurateRequest {
  ids: string[];
  backfill: boolean;
  enrich: EnrichmentArgs[];
}

// One outbox row; its key is unique per row because rows are delivered as signals, not as starts.
export function curateJob(orgId: string, ids: string[], enrich: EnrichmentArgs[] = [], backfill = false): JobRequest {
  const request: CurateRequest = { ids, backfill, enrich };
  return {
    orgId,
    jobType: CURATE_JOB,
    jobKey: `curate-${newId()}`,
    args: [request],
    description: backfill
      ? 'embed every memory of the org that lacks a current vector'
      : ids.length + enrich.length === 0
        ? 'fold the postings staged'
        : `embed ${ids.length} changed memories, enrich ${enrich.length}`,
  };
}

// The jobs of a batch of saved memories: one per org.
export function curateJobsOf(saved: { orgId: string; memoryId: string; enrich: EnrichmentArgs | undefined }[]): JobRequest[] {
  const byOrg = new Map<string, { ids: string[]; enrich: EnrichmentArgs[] }>();
  for (const { orgId, memoryId, enrich } of saved) {
    const entry = byOrg.get(orgId) ?? { ids: [], enrich: [] };
    entry.ids.push(memoryId);
    if (enrich) entry.enrich.push(enrich);
    byOrg.set(orgId, entry);
  }
  return [...byOrg].map(([orgId, { ids, enrich }]) => curateJob(orgId, ids, enrich));
}

// Several requests to one curator as one.
export const mergeCurateRequests = (requests: CurateRequest[]): CurateRequest => ({
  ids: [...new Set(requests.flatMap((r) => r.ids))],
  backfill: requests.some((r) => r.backfill),
  enrich: requests.flatMap((r) => r.enrich ?? []),
});
