import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { escrowInsert, seal } from '../llm/escrow.ts';
import type { ByokKeys } from '../llm/port.ts';
import { prepareContent, storedBytes, withRedaction } from '../memories/content.ts';
import { MEMORIES_IN_NAMESPACES, MEMORY_COLUMNS, memoryView, type MemoryRow, type MemoryView } from '../store/model.ts';
import { writeSaves } from '../memories/save-batch.ts';
import { supersedeMemories } from '../memories/supersede.ts';
import { enqueueJobs, type JobRequest } from '../outbox/enqueue.ts';
import { query, queryOne, sql } from '../sql.ts';
import { proposalRow } from './proposals.ts';
import type { PairText } from './tasks.ts';

export const MERGE_JOB = 'consolidationMerge';
const MERGED_TAG = 'merged-from-consolidation';

export interface MergeResult {
  proposalId: string;
  mergedMemoryId: string;
  mergedContent: string;
  hadConflict: boolean;
}

export interface MergeArgs {
  caller: Caller;
  proposalId: string;
  escrowId: string | null;
}

export interface MergeDraft {
  merged: string;
  hadConflict: boolean;
}

// The merge to wait for, with its job so the caller can start it at once (a no-op when it already runs).
export type MergeStart = { done: MergeResult } | { job: JobRequest };

async function resultOf(em: EntityManager, orgId: string, proposalId: string, mergedMemoryId: string): Promise<MergeResult> {
  const row = await queryOne(
    em,
    sql<{
      content: string;
      metadata: { consolidation?: { had_conflict?: boolean } };
    }>`select content, metadata from memories where id = ${mergedMemoryId} and org_id = ${orgId}`,
  );
  if (!row) throw notFound('memory', mergedMemoryId);
  return { proposalId, mergedMemoryId, mergedContent: row.content, hadConflict: row.metadata.consolidation?.had_conflict === true };
}

// Marks an approved proposal as merging and queues the merge in the same transaction (with the caller's
// sealed keys when BYOK). A merged proposal answers its result again, so the request is safe to repeat; a
// merge already running is joined rather than started twice.
export async function startMerge(
  em: EntityManager,
  caller: Caller,
  proposalId: string,
  byok: ByokKeys | undefined,
  escrowKey: Buffer,
): Promise<MergeStart> {
  return em.transactional(async (tx) => {
    const row = await proposalRow(tx, caller.orgId, proposalId, true);
    if (row.status === 'merged' && row.merged_memory_id)
      return { done: await resultOf(tx, caller.orgId, proposalId, row.merged_memory_id) };
    if (row.status !== 'approved')
      throw conflict('proposal_not_approved', `only an approved proposal can be merged; this one is ${row.status}`);
    if (row.merge_state === 'running') {
      // Joins the attempt an earlier request queued, even if that request died before starting it.
      const workflowId = mergeWorkflowId(proposalId, row.merge_attempts);
      const queued = await queryOne(
        tx,
        sql<{
          args: unknown[];
          description: string;
        }>`select args, description from outbox where org_id = ${caller.orgId} and job_key = ${workflowId}`,
      );
      if (queued)
        return { job: { orgId: caller.orgId, jobType: MERGE_JOB, jobKey: workflowId, args: queued.args, description: queued.description } };
    }
    const updated = await queryOne(
      tx,
      sql<{
        merge_attempts: number;
      }>`update consolidation_proposals set merge_state = 'running', merge_error = null, merge_attempts = merge_attempts + 1
        where org_id = ${caller.orgId} and id = ${proposalId} returning merge_attempts`,
    );
    const escrow = byok ? seal(escrowKey, newId(), caller.orgId, byok) : null;
    if (escrow) await query(tx, escrowInsert([escrow]));
    const workflowId = mergeWorkflowId(proposalId, updated!.merge_attempts);
    const args: MergeArgs = { caller, proposalId, escrowId: escrow?.id ?? null };
    const job: JobRequest = {
      orgId: caller.orgId,
      jobType: MERGE_JOB,
      jobKey: workflowId,
      args: [args],
      description: `merge the memories of consolidation proposal ${proposalId}`,
    };
    await enqueueJobs(tx, [job]);
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'consolidation.merge.start',
      targetId: proposalId,
      actor: actorOf(caller),
      details: { attempt: updated!.merge_attempts },
    });
    return { job };
  });
}

// Each attempt is its own execution, so a failed merge can be asked for again.
const mergeWorkflowId = (proposalId: string, attempt: number): string => `consolidation-merge-${proposalId}-${attempt}`;

async function pairRows(
  em: EntityManager,
  orgId: string,
  a: string,
  b: string,
  lock: boolean,
): Promise<
  [
    MemoryRow & { namespace_id: string; stored_bytes: number; doc_len: number },
    MemoryRow & { namespace_id: string; stored_bytes: number; doc_len: number },
  ]
> {
  const rows = await query(
    em,
    sql<
      MemoryRow & { namespace_id: string; stored_bytes: number; doc_len: number }
    >`select ${MEMORY_COLUMNS}, m.namespace_id, m.stored_bytes, m.doc_len
      from ${MEMORIES_IN_NAMESPACES} where m.org_id = ${orgId} and m.id in (${a}, ${b}) ${lock ? sql`for update of m` : sql``}`,
  );
  const first = rows.find((r) => r.id === a);
  const second = rows.find((r) => r.id === b);
  if (!first || !second) throw notFound('memory', first ? b : a);
  for (const r of [first, second])
    if (r.superseded_by) throw conflict('memory_superseded', `memory ${r.id} was already merged into ${r.superseded_by}`);
  return [first, second];
}

// What the model is shown: both memories as they are now.
export async function pairTexts(em: EntityManager, orgId: string, memoryAId: string, memoryBId: string): Promise<[PairText, PairText]> {
  const rows = await pairRows(em, orgId, memoryAId, memoryBId, false);
  const [a, b] = rows.map((r): PairText => ({ content: r.content, createdAt: memoryView(r).createdAt }));
  return [a!, b!];
}

export async function mergeInput(
  em: EntityManager,
  orgId: string,
  proposalId: string,
): Promise<{ kind: string; a: PairText; b: PairText }> {
  const p = await proposalRow(em, orgId, proposalId);
  const [a, b] = await pairTexts(em, orgId, p.memory_a_id, p.memory_b_id);
  return { kind: p.kind, a, b };
}

// One transaction: the merged memory (saved like any memory: postings, counters, memory.saved, audit), both
// originals superseded (out of search and the live counts, memory.updated each), the proposal merged.
// Idempotent: a retry after commit finds the proposal merged and answers the same result.
export async function applyMerge(em: EntityManager, caller: Caller, proposalId: string, draft: MergeDraft): Promise<MergeResult> {
  const prepared = await prepareContent(draft.merged, caller.orgId);
  return em.transactional(async (tx) => {
    const p = await proposalRow(tx, caller.orgId, proposalId, true);
    if (p.status === 'merged' && p.merged_memory_id) return resultOf(tx, caller.orgId, proposalId, p.merged_memory_id);
    if (p.status !== 'approved') throw conflict('proposal_not_approved', `the proposal is ${p.status}`);
    const [a, b] = await pairRows(tx, caller.orgId, p.memory_a_id, p.memory_b_id, true);
    const now = Date.now();
    const memory: MemoryView = {
      id: newId(),
      content: prepared.content,
      namespace: a.namespace,
      tags: [...new Set([...a.tags, ...b.tags, MERGED_TAG])],
      source: 'consolidation',
      sourceRef: null,
      metadata: withRedaction(
        { consolidation: { proposal_id: proposalId, kind: p.kind, merged_from: [a.id, b.id], had_conflict: draft.hadConflict } },
        prepared,
      ),
      createdAt: now,
      updatedAt: now,
      // The merged memory tells things as of the later of the two.
      occurredAt: Math.max(memoryView(a).occurredAt, memoryView(b).occurredAt),
      // A scope both originals share stays; one they differ on is not the merged memory's.
      userId: a.user_id === b.user_id ? a.user_id : null,
      agentId: a.agent_id === b.agent_id ? a.agent_id : null,
      runId: a.run_id === b.run_id ? a.run_id : null,
    };
    await writeSaves(tx, [{ caller, memory, bytes: storedBytes(prepared.bytes, memory.metadata) }]);
    await supersedeMemories(tx, caller.orgId, new Map([a.id, b.id].map((id) => [id, memory.id])));
    await query(
      tx,
      sql`update consolidation_proposals set status = 'merged', merged_memory_id = ${memory.id}, merge_state = null,
          merge_error = null where org_id = ${caller.orgId} and id = ${proposalId}`,
    );
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'consolidation.merge',
      targetId: proposalId,
      actor: actorOf(caller),
      details: { merged_memory_id: memory.id, merged_from: [a.id, b.id] },
    });
    return { proposalId, mergedMemoryId: memory.id, mergedContent: memory.content, hadConflict: draft.hadConflict };
  });
}

// The dashboard sees why the last attempt failed; the proposal stays approved, ready for another attempt.
export async function recordMergeFailure(em: EntityManager, orgId: string, proposalId: string, error: string): Promise<void> {
  await query(
    em,
    sql`update consolidation_proposals set merge_state = 'failed', merge_error = ${error}
      where id = ${proposalId} and org_id = ${orgId} and status <> 'merged'`,
  );
}
