import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { EnrichmentArgs } from '../domain/enrichment/schedule.ts';
import { LLM_CALL, TRANSACTION } from './options.ts';

const { enrichMemory } = proxyActivities<Activities>(LLM_CALL);
const { releaseLlmKeys } = proxyActivities<Activities>(TRANSACTION);

export interface EnrichmentReport {
  stored: string[];
  skipped: string[];
  failed: { task: string; error: string }[];
}

// The background work after a save: each requested enrichment on its own, so one that fails (a refused
// key, a malformed answer, retries exhausted) neither blocks the others nor touches the memory. The
// caller's sealed keys, if any, are destroyed however it ends.
export async function memoryEnrichmentWorkflow(args: EnrichmentArgs): Promise<EnrichmentReport> {
  const report: EnrichmentReport = { stored: [], skipped: [], failed: [] };
  try {
    for (const task of args.tasks) {
      try {
        const outcome = await enrichMemory({ orgId: args.orgId, memoryId: args.memoryId, task, contentHash: args.contentHash, escrowId: args.escrowId });
        report[outcome].push(task);
      } catch (err) {
        const error = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
        report.failed.push({ task, error });
      }
    }
  } finally {
    if (args.escrowId) await releaseLlmKeys({ escrowId: args.escrowId });
  }
  return report;
}
