import type { EntityManager } from '@mikro-orm/postgresql';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { deleteOrg } from '../accounts/rows.ts';
import { deleteByCtid, query, sql } from '../sql.ts';
import { forgetEmbeddings } from '../store/vectors.ts';

export const ORG_ERASE_JOB = 'orgErase';
const ERASE_ROWS = 5000;
const orgEraseWorkflowId = (orgId: string): string => `org-erase-${orgId}`;

// Called in the transaction that removes the org's last member (account deletion): from its commit on, no
// credential reaches the org, and the `org-erase-<org id>` workflow erases its rows in batches, so an org
// of a million memories never becomes one transaction that runs for minutes.
export async function scheduleOrgErasure(em: EntityManager, orgId: string, memories: number): Promise<void> {
  await enqueueJobs(em, [
    {
      orgId,
      jobType: ORG_ERASE_JOB,
      jobKey: orgEraseWorkflowId(orgId),
      args: [orgId],
      description: `erase deleted org ${orgId} (${memories} memories)`,
    },
  ]);
}

const byOrg = (em: EntityManager, table: string, orgId: string): Promise<number> =>
  deleteByCtid(em, table, sql`select ctid from ${sql.table(table)} where org_id = ${orgId} limit ${ERASE_ROWS}`);

// One batch of a deleted org's rows; returns how many went, 0 once the org is gone. Tables written by each
// save carry no foreign key (see 0002_memories), so they go first, batch by batch; a memory's links and
// recalls go with it (foreign keys), its vector by id. Last, the org's row, whose delete cascades to what
// is left (namespaces, entities, runbooks, chats, webhooks, exports...): all small by then or bounded per org.
export async function eraseOrgBatch(em: EntityManager, orgId: string): Promise<number> {
  return em.transactional(async (tx) => {
    for (const table of ['lexical_staged', 'lexical_blocks', 'lexical_docs', 'lexical_tombstones', 'lexical_state']) {
      const n = await byOrg(tx, table, orgId);
      if (n > 0) return n;
    }
    // By ctid, as deleteByCtid does: an `id in (...)` semi-join followed the statistics, and for an org they do not
    // know yet (estimated at one row) re-ran its subquery for each of the org's memories.
    const memories = await query(
      tx,
      sql<{
        id: string;
      }>`delete from memories where ctid = any(array(select ctid from memories where org_id = ${orgId} limit ${ERASE_ROWS})) returning id`,
    );
    if (memories.length > 0) {
      await forgetEmbeddings(
        tx,
        orgId,
        memories.map((m) => m.id),
      );
      return memories.length;
    }
    for (const table of ['events', 'audit_events', 'idempotency_keys', 'outbox']) {
      const n = await byOrg(tx, table, orgId);
      if (n > 0) return n;
    }
    await query(tx, sql`delete from counters where org_id = ${orgId}`);
    await deleteOrg(tx, orgId);
    return 0;
  });
}
