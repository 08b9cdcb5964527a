import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { requireRole } from '../accounts/roles.ts';
import { recordAudit } from '../audit/record.ts';
import { bumpCounters, readCounters } from '../counters.ts';
import { curateJob } from '../store/curate.ts';
import { recordEvents } from '../webhooks/event-log.ts';
import { notFound } from '../errors.ts';
import { NAMESPACE_COUNTERS, ORG_COUNTERS } from '../store/counters.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { unindexMemories } from '../store/postings.ts';
import { query, queryOne, sql } from '../sql.ts';
import { forgetEmbeddings } from '../store/vectors.ts';

export const PROJECT_ERASE_JOB = 'projectErase';
const ERASE_BATCH = 500;

export interface ProjectErasure {
  orgId: string;
  namespaceId: string;
  name: string;
}

const projectEraseWorkflowId = (namespaceId: string): string => `project-erase-${namespaceId}`;

// Deletes the project at once and leaves its memories to the `project-erase-<id>` workflow, which erases
// them in batches: a project of a million memories never becomes one transaction that runs for minutes.
// With the namespace row gone, its memories drop out of every read (they are all read through it), and a
// save that names the project again makes a new one (namespaces.ts explains why none can land in the old).
// The org's memory counts fall as the batches go.
export async function deleteProject(em: EntityManager, caller: Caller, id: string): Promise<{ memories: number }> {
  return em.transactional(async (tx) => {
    const project = await queryOne(
      tx,
      sql<{ name: string }>`select name from namespaces where id = ${id} and org_id = ${caller.orgId} for update`,
    );
    if (!project) throw notFound('project', id);
    requireRole(caller, 'admin');
    const memories = (await readCounters(tx, caller.orgId, id)).get(NAMESPACE_COUNTERS.live) ?? 0;
    await query(tx, sql`delete from counters where org_id = ${caller.orgId} and scope_id = ${id}`);
    await query(tx, sql`delete from namespaces where org_id = ${caller.orgId} and id = ${id}`);
    const erasure: ProjectErasure = { orgId: caller.orgId, namespaceId: id, name: project.name };
    await enqueueJobs(tx, [
      {
        orgId: caller.orgId,
        jobType: PROJECT_ERASE_JOB,
        jobKey: projectEraseWorkflowId(id),
        args: [erasure],
        description: `erase the ${memories} memories of deleted project ${id}`,
      },
    ]);
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'project.delete',
      targetId: id,
      actor: actorOf(caller),
      details: { name: project.name, memories },
    });
    return { memories };
  });
}

// One batch of a deleted project's memories, in one transaction: the rows, their postings, vectors, the org's
// counters, and one memory.deleted event each. Returns how many it erased; 0 means the project is gone for good.
export async function eraseProjectBatch(em: EntityManager, job: ProjectErasure): Promise<number> {
  return em.transactional(async (tx) => {
    // By ctid (as in eraseOrgBatch): a plan that does not depend on what the statistics know of the org.
    const rows = await query(
      tx,
      sql<{ id: string; stored_bytes: number; doc_len: number; superseded_by: string | null; thread: string | null }>`
        delete from memories where ctid = any(array(select ctid from memories
        where org_id = ${job.orgId} and namespace_id = ${job.namespaceId} limit ${ERASE_BATCH}))
        returning id, stored_bytes, doc_len, superseded_by, metadata->>'parent_ref' as thread`,
    );
    if (rows.length === 0) return 0;
    let bytes = 0;
    let docLen = 0;
    let live = 0;
    for (const row of rows) {
      bytes += row.stored_bytes;
      // Superseded memories left the live counts when they were merged.
      if (!row.superseded_by) {
        live += 1;
        docLen += row.doc_len;
      }
    }
    await unindexMemories(
      tx,
      job.orgId,
      rows.map((r) => r.id),
    );
    await forgetEmbeddings(
      tx,
      job.orgId,
      rows.map((r) => r.id),
    );
    // A thread that reaches into other projects: its chunks there are mixed with their context again, without
    // the erased ones (domain/store/thread-context.ts).
    const threads = [...new Set(rows.flatMap((r) => (r.thread === null ? [] : [r.thread])))];
    if (threads.length > 0) {
      const elsewhere = await query(
        tx,
        sql<{
          id: string;
        }>`select id from memories where org_id = ${job.orgId} and metadata ? 'parent_ref'
            and metadata->>'parent_ref' = any(${threads}::text[])
          and namespace_id <> ${job.namespaceId} and superseded_by is null`,
      );
      if (elsewhere.length > 0)
        await enqueueJobs(tx, [
          curateJob(
            job.orgId,
            elsewhere.map((r) => r.id),
          ),
        ]);
    }
    await recordEvents(
      tx,
      rows.map((r) => ({ orgId: job.orgId, type: 'memory.deleted' as const, data: { id: r.id, namespace: job.name } })),
    );
    await bumpCounters(tx, [
      { orgId: job.orgId, scopeId: job.orgId, name: ORG_COUNTERS.live, delta: -live },
      { orgId: job.orgId, scopeId: job.orgId, name: ORG_COUNTERS.bytes, delta: -bytes },
      { orgId: job.orgId, scopeId: job.orgId, name: ORG_COUNTERS.docLen, delta: -docLen },
    ]);
    return rows.length;
  });
}
