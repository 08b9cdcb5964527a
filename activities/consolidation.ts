import { findCandidates, type ContradictionCandidate } from '../domain/consolidation/detect.ts';
import {
  applyMerge,
  mergeInput,
  pairTexts,
  recordMergeFailure,
  type MergeArgs,
  type MergeDraft,
  type MergeResult,
} from '../domain/consolidation/merge.ts';
import { recordProposals, type NewProposal } from '../domain/consolidation/proposals.ts';
import { contradictionTask, mergeTask } from '../domain/consolidation/tasks.ts';
import { llmError } from '../domain/llm/port.ts';
import type { CuratorActivityDeps } from './curator.ts';
import { keysFor, type LlmActivityDeps } from './enrichment.ts';
import { asActivity } from './failures.ts';

export interface ScanReport {
  scanned: number;
  created: number;
  alreadyKnown: number;
  contradictions: ContradictionCandidate[];
}

export function consolidationActivities(deps: LlmActivityDeps & Pick<CuratorActivityDeps, 'embedder'>) {
  const { orm, llm } = deps;
  return {
    // The lexical pass records its proposals itself, so however many it finds, only counts and the few
    // contradiction candidates enter the workflow's history.
    async scanForConsolidation(input: { orgId: string; namespace?: string | undefined; threshold: number }): Promise<ScanReport> {
      const em = orm.em.fork();
      const found = await findCandidates(em, input.orgId, input.namespace, input.threshold, deps.embedder);
      const recorded = await recordProposals(em, input.orgId, found.proposals);
      return {
        scanned: found.scanned,
        created: recorded.created,
        alreadyKnown: found.alreadyKnown + recorded.alreadyKnown,
        contradictions: found.contradictions,
      };
    },
    // Detection is a paid-plan feature and runs on the server's providers.
    async checkContradiction(input: { orgId: string; candidate: ContradictionCandidate }): Promise<NewProposal | null> {
      return asActivity(async () => {
        const { candidate } = input;
        const [a, b] = await pairTexts(orm.em.fork(), input.orgId, candidate.memoryAId, candidate.memoryBId);
        const { value } = await llm.run(contradictionTask(a, b));
        return value.contradicts ? { ...candidate, kind: 'contradiction', note: value.explanation || null } : null;
      });
    },
    async recordConsolidationProposals(input: {
      orgId: string;
      proposals: NewProposal[];
    }): Promise<{ created: number; alreadyKnown: number }> {
      return recordProposals(orm.em.fork(), input.orgId, input.proposals);
    },
    async draftMerge(input: MergeArgs): Promise<MergeDraft> {
      return asActivity(async () => {
        const em = orm.em.fork();
        const { kind, a, b } = await mergeInput(em, input.caller.orgId, input.proposalId);
        const byok = await keysFor(deps, input.caller.orgId, input.escrowId);
        if (byok === null) throw llmError('rejected', 'the provider key sent with the merge request has expired; send it again');
        const { value } = await llm.run(mergeTask(kind, a, b), byok);
        return { merged: value.merged, hadConflict: value.had_conflict };
      });
    },
    async applyMerge(input: MergeArgs & { draft: MergeDraft }): Promise<MergeResult> {
      return asActivity(() => applyMerge(orm.em.fork(), input.caller, input.proposalId, input.draft));
    },
    async recordMergeFailure(input: { orgId: string; proposalId: string; error: string }): Promise<void> {
      await recordMergeFailure(orm.em.fork(), input.orgId, input.proposalId, input.error);
    },
  };
}
