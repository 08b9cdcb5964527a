import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { NewProposal } from '../domain/consolidation/proposals.ts';
import type { MergeArgs, MergeResult } from '../domain/consolidation/merge.ts';
import { BOOKKEEPING, INTERACTIVE_LLM_CALL, TRANSACTION } from './options.ts';

const { scanForConsolidation, recordConsolidationProposals, applyMerge } = proxyActivities<Activities>(TRANSACTION);
// A merge's failure and the release of a caller's keys are recorded however long the database is away.
const { recordMergeFailure, releaseLlmKeys } = proxyActivities<Activities>(BOOKKEEPING);
const { checkContradiction, draftMerge } = proxyActivities<Activities>(INTERACTIVE_LLM_CALL);

export interface DetectArgs {
  orgId: string;
  namespace?: string | undefined;
  threshold: number;
  checkContradictions: boolean;
}

export interface DetectReport {
  scanned: number;
  proposalsCreated: number;
  alreadyKnown: number;
  contradictionChecksFailed: number;
}

// Lexical duplicates and stale pairs first (no model); then a model judges each contradiction candidate.
// A candidate the model could not judge is left for the next run, not guessed.
export async function consolidationDetectWorkflow(args: DetectArgs): Promise<DetectReport> {
  const scan = await scanForConsolidation({ orgId: args.orgId, namespace: args.namespace, threshold: args.threshold });
  const proposals: NewProposal[] = [];
  let contradictionChecksFailed = 0;
  if (args.checkContradictions) {
    for (const candidate of scan.contradictions) {
      try {
        const proposal = await checkContradiction({ orgId: args.orgId, candidate });
        if (proposal) proposals.push(proposal);
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        contradictionChecksFailed++;
      }
    }
  }
  const recorded = await recordConsolidationProposals({ orgId: args.orgId, proposals });
  return {
    scanned: scan.scanned,
    proposalsCreated: scan.created + recorded.created,
    alreadyKnown: scan.alreadyKnown + recorded.alreadyKnown,
    contradictionChecksFailed,
  };
}

// The model drafts the merged text; one transaction then writes it and supersedes both originals. A
// failure is recorded on the proposal for the dashboard and fails this execution, so the next attempt
// runs under a new id.
export async function consolidationMergeWorkflow(args: MergeArgs): Promise<MergeResult> {
  try {
    const draft = await draftMerge(args);
    return await applyMerge({ ...args, draft });
  } catch (err) {
    const error = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    await recordMergeFailure({ orgId: args.caller.orgId, proposalId: args.proposalId, error });
    throw err;
  } finally {
    if (args.escrowId) await releaseLlmKeys({ orgId: args.caller.orgId, escrowId: args.escrowId });
  }
}
