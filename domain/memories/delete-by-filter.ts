import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { requireRole } from '../accounts/roles.ts';
import { recordAudit } from '../audit/record.ts';
import { invalid, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { query, queryOne, sql, toDate } from '../sql.ts';
import { compileFilters, type MemoryFilters } from '../store/filters.ts';
import { deleteMemories } from './delete.ts';

export const MEMORY_DELETION_JOB = 'memoryDeletion';
const memoryDeletionWorkflowId = (deletionId: string): string => `memory-deletion-${deletionId}`;
// Memories deleted per transaction: each batch holds its rows locked for a short while only.
export const DELETION_BATCH = 500;

export interface DeletionView {
  id: string;
  status: 'pending' | 'running' | 'completed';
  filters: MemoryFilters;
  // The memories that matched when the deletion was asked for, and how many it has deleted so far.
  matched: number;
  deleted: number;
  createdAt: number;
  completedAt: number | null;
}

export interface DeletionJob {
  orgId: string;
  deletionId: string;
}

interface DeletionRow {
  id: string;
  status: DeletionView['status'];
  filters: MemoryFilters;
  matched: number;
  deleted: number;
  created_at: string;
  completed_at: string | null;
}

const view = (r: DeletionRow): DeletionView => ({
  id: r.id,
  status: r.status,
  filters: r.filters,
  matched: r.matched,
  deleted: r.deleted,
  createdAt: toDate(r.created_at).getTime(),
  completedAt: r.completed_at ? toDate(r.completed_at).getTime() : null,
});

// Whether a filter narrows which memories match (include_superseded only widens, an empty list or object names nothing).
const selects = ([key, value]: [string, unknown]): boolean =>
  key !== 'includeSuperseded' && value !== undefined && !(typeof value === 'object' && value !== null && Object.keys(value).length === 0);

// Admins only. The request records the deletion and its job in one transaction and answers at once; the
// `memory-deletion-<id>` workflow then deletes what matches, batch by batch, each memory as DELETE would.
export async function requestDeletion(em: EntityManager, caller: Caller, filters: MemoryFilters): Promise<DeletionView> {
  requireRole(caller, 'admin');
  if (!Object.entries(filters).some(selects)) {
    const names = 'namespace, tags, metadata_filter, a time bound, entity, user_id, agent_id, run_id or filters';
    throw invalid('filter_required', `a deletion by filter names at least one filter (${names})`);
  }
  return em.transactional(async (tx) => {
    const compiled = await compileFilters(tx, caller.orgId, filters);
    const [counted] = compiled.satisfiable
      ? await query(tx, sql<{ n: number }>`select count(*)::int as n from memories m where ${compiled.where}`)
      : [{ n: 0 }];
    const id = newId();
    const row = await queryOne(
      tx,
      sql<DeletionRow>`insert into memory_deletions (org_id, id, filters, matched, requested_by, requested_with)
        values (${caller.orgId}, ${id}, ${JSON.stringify(filters)}::jsonb, ${counted!.n}, ${caller.userId}, ${caller.credentialId})
        returning id, status, filters, matched, deleted, created_at, completed_at`,
    );
    const job: DeletionJob = { orgId: caller.orgId, deletionId: id };
    const description = `delete the ${counted!.n} memories matching ${JSON.stringify(filters)}`;
    await enqueueJobs(tx, [
      { orgId: caller.orgId, jobType: MEMORY_DELETION_JOB, jobKey: memoryDeletionWorkflowId(id), args: [job], description },
    ]);
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'memory.delete_by_filter',
      targetId: id,
      actor: actorOf(caller),
      details: { filters, matched: counted!.n },
    });
    return view(row!);
  });
}

export async function getDeletion(em: EntityManager, orgId: string, id: string): Promise<DeletionView> {
  const row = await queryOne(
    em,
    sql<DeletionRow>`select id, status, filters, matched, deleted, created_at, completed_at
      from memory_deletions where org_id = ${orgId} and id = ${id}`,
  );
  if (!row) throw notFound('deletion', id);
  return view(row);
}

// One batch of a deletion, in one transaction: up to DELETION_BATCH memories that match now (a memory saved since
// the request that matches goes too), each deleted as DELETE would, by the requester. Returns how many; at 0 the
// deletion is marked completed.
export async function deletionBatch(em: EntityManager, job: DeletionJob): Promise<number> {
  return em.transactional(async (tx) => {
    const row = await queryOne(
      tx,
      sql<{ filters: MemoryFilters; status: string; requested_by: string | null; requested_with: string | null }>`
        select filters, status, requested_by, requested_with from memory_deletions
         where org_id = ${job.orgId} and id = ${job.deletionId} for update`,
    );
    if (!row || row.status === 'completed') return 0;
    const compiled = await compileFilters(tx, job.orgId, row.filters);
    const ids = compiled.satisfiable
      ? (
          await query(tx, sql<{ id: string }>`select m.id from memories m where ${compiled.where} order by m.id limit ${DELETION_BATCH}`)
        ).map((r) => r.id)
      : [];
    const deleted =
      ids.length > 0
        ? await deleteMemories(
            tx,
            job.orgId,
            ids,
            { userId: row.requested_by, credentialId: row.requested_with },
            { deletion_id: job.deletionId },
          )
        : 0;
    await query(
      tx,
      sql`update memory_deletions set deleted = deleted + ${deleted}, status = ${deleted > 0 ? 'running' : 'completed'},
            completed_at = case when ${deleted} = 0 then now() end
          where org_id = ${job.orgId} and id = ${job.deletionId}`,
    );
    return deleted;
  });
}
