import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, notFound } from '../errors.ts';
import { query, queryOne, sql, toDate, toDateOrNull } from '../sql.ts';

export const PROPOSAL_KINDS = ['duplicate', 'contradiction', 'stale'] as const;
export type ProposalKind = (typeof PROPOSAL_KINDS)[number];
export const PROPOSAL_STATUSES = ['pending', 'approved', 'rejected', 'merged'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];
export const REVIEW_DECISIONS = ['approved', 'rejected'] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];

export interface ProposalView {
  id: string;
  kind: ProposalKind;
  memoryAId: string;
  memoryBId: string;
  score: number;
  status: ProposalStatus;
  note: string | null;
  proposedAt: number;
  reviewedAt: number | null;
  mergedMemoryId: string | null;
  mergeState: 'running' | 'failed' | null;
  mergeError: string | null;
}

export interface ProposalRow {
  id: string;
  org_id: string;
  kind: ProposalKind;
  memory_a_id: string;
  memory_b_id: string;
  score: number;
  status: ProposalStatus;
  note: string | null;
  proposed_at: string;
  reviewed_at: string | null;
  merged_memory_id: string | null;
  merge_state: 'running' | 'failed' | null;
  merge_error: string | null;
  merge_attempts: number;
}

const proposalView = (r: ProposalRow): ProposalView => ({
  id: r.id,
  kind: r.kind,
  memoryAId: r.memory_a_id,
  memoryBId: r.memory_b_id,
  score: Number(r.score),
  status: r.status,
  note: r.note,
  proposedAt: toDate(r.proposed_at).getTime(),
  reviewedAt: toDateOrNull(r.reviewed_at)?.getTime() ?? null,
  mergedMemoryId: r.merged_memory_id,
  mergeState: r.merge_state,
  mergeError: r.merge_error,
});

export interface ProposalQuery {
  status: ProposalStatus | 'all';
  kind?: ProposalKind | undefined;
  limit: number;
  offset: number;
}

export async function listProposals(em: EntityManager, orgId: string, q: ProposalQuery): Promise<ProposalView[]> {
  const rows = await query(
    em,
    sql<ProposalRow>`select * from consolidation_proposals where org_id = ${orgId}
      ${q.status === 'all' ? sql`` : sql`and status = ${q.status}`} ${q.kind ? sql`and kind = ${q.kind}` : sql``}
      order by proposed_at desc, id desc limit ${q.limit} offset ${q.offset}`,
  );
  return rows.map(proposalView);
}

export async function proposalRow(em: EntityManager, orgId: string, id: string, lock = false): Promise<ProposalRow> {
  const row = await queryOne(
    em,
    sql<ProposalRow>`select * from consolidation_proposals where id = ${id} and org_id = ${orgId} ${lock ? sql`for update` : sql``}`,
  );
  if (!row) throw notFound('consolidation proposal', id);
  return row;
}

export const getProposal = async (em: EntityManager, orgId: string, id: string): Promise<ProposalView> =>
  proposalView(await proposalRow(em, orgId, id));

// A decision can be changed until the proposal is merged; each decision stamps reviewed_at.
export async function reviewProposal(
  em: EntityManager,
  caller: Caller,
  id: string,
  decision: ReviewDecision,
  note: string | undefined,
): Promise<ProposalView> {
  return em.transactional(async (tx) => {
    const row = await proposalRow(tx, caller.orgId, id, true);
    if (row.status === 'merged') throw conflict('proposal_already_merged', 'a merged proposal cannot be reviewed again');
    if (row.merge_state === 'running') throw conflict('merge_in_progress', 'wait for the running merge to finish');
    const updated = await queryOne(
      tx,
      sql<ProposalRow>`update consolidation_proposals set status = ${decision}, reviewed_at = now(), reviewed_by = ${caller.userId},
          note = coalesce(${note ?? null}, note) where org_id = ${caller.orgId} and id = ${id} returning *`,
    );
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'consolidation.review',
      targetId: id,
      actor: actorOf(caller),
      details: { decision },
    });
    return proposalView(updated!);
  });
}

export interface NewProposal {
  kind: ProposalKind;
  memoryAId: string;
  memoryBId: string;
  namespaceId: string;
  score: number;
  note: string | null;
}

// Inserts the pairs not yet known; a pair that already has a proposal (of any kind or status) counts as known.
export async function recordProposals(
  em: EntityManager,
  orgId: string,
  proposals: NewProposal[],
): Promise<{ created: number; alreadyKnown: number }> {
  if (proposals.length === 0) return { created: 0, alreadyKnown: 0 };
  const inserted = await query(
    em,
    sql<{
      id: string;
    }>`insert into consolidation_proposals (id, org_id, namespace_id, kind, memory_a_id, memory_b_id, score, note, proposed_at)
      select gen_random_uuid(), ${orgId}, n, k, a, b, s, t, now()
        from unnest(${proposals.map((p) => p.namespaceId)}::uuid[], ${proposals.map((p) => p.kind)}::text[],
          ${proposals.map((p) => p.memoryAId)}::uuid[],
                    ${proposals.map((p) => p.memoryBId)}::uuid[], ${proposals.map((p) => p.score)}::float8[],
                        ${proposals.map((p) => p.note)}::text[]) as u(n, k, a, b, s, t)
        -- Each memory by its key (OFFSET 0 keeps it a probe whatever the statistics know of the org: memoryPasses).
        where exists (select 1 from memories m where m.org_id = ${orgId} and m.id = u.a and m.superseded_by is null offset 0)
          and exists (select 1 from memories m where m.org_id = ${orgId} and m.id = u.b and m.superseded_by is null offset 0)
      on conflict (org_id, memory_a_id, memory_b_id) do nothing returning id`,
  );
  return { created: inserted.length, alreadyKnown: proposals.length - inserted.length };
}

// Pairs of these memories that already have a proposal, as `a/b` keys.
export async function knownPairs(em: EntityManager, orgId: string, memoryIds: string[]): Promise<Set<string>> {
  const rows = await query(
    em,
    sql<{ a: string; b: string }>`select memory_a_id as a, memory_b_id as b from consolidation_proposals
      where org_id = ${orgId} and memory_a_id = any(${memoryIds}::uuid[])`,
  );
  return new Set(rows.map((r) => `${r.a}/${r.b}`));
}
