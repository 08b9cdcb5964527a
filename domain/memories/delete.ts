import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { recordAudit } from '../audit/record.ts';
import { recordEvents } from '../webhooks/event-log.ts';
import { notFound } from '../errors.ts';
import { remixChunksAfter } from '../store/thread-context.ts';
import { unindexMemories } from '../store/postings.ts';
import { query, queryOne, sql } from '../sql.ts';
import { countDeleted } from '../store/counters.ts';
import { MEMORIES_IN_NAMESPACES } from '../store/model.ts';
import { forgetEmbeddings } from '../store/vectors.ts';

// Deletes one memory with its postings and vector; memory.deleted and the audit row commit with it. A retry after a
// successful delete finds the audit row and succeeds again, so DELETE is safe to repeat.
export async function deleteMemory(em: EntityManager, caller: Caller, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const row = await queryOne(
      tx,
      sql<{ content_bytes: number; doc_len: number; namespace_id: string; namespace: string; superseded_by: string | null; thread: boolean }>`
        select m.content_bytes, m.doc_len, m.namespace_id, n.name as namespace, m.superseded_by, m.metadata ? 'parent_ref' as thread
          from ${MEMORIES_IN_NAMESPACES}
         where m.id = ${id} and m.org_id = ${caller.orgId} for update of m`,
    );
    if (!row) {
      const tombstone = await queryOne(
        tx,
        sql`select 1 from audit_events where org_id = ${caller.orgId} and target_id = ${id} and action = 'memory.delete' limit 1`,
      );
      if (tombstone) return;
      throw notFound();
    }
    await unindexMemories(tx, caller.orgId, [id]);
    await forgetEmbeddings(tx, caller.orgId, [id]);
    // The chunks after it in its thread were searched with it as context: the curator mixes theirs again.
    if (row.thread) await remixChunksAfter(tx, caller.orgId, [id]);
    await query(tx, sql`delete from memories where org_id = ${caller.orgId} and id = ${id}`);
    await countDeleted(tx, { orgId: caller.orgId, namespaceId: row.namespace_id, bytes: row.content_bytes, docLen: row.doc_len }, row.superseded_by !== null);
    await recordEvents(tx, [{ orgId: caller.orgId, type: 'memory.deleted', data: { id, namespace: row.namespace } }]);
    await recordAudit(tx, { orgId: caller.orgId, action: 'memory.delete', targetId: id, actor: actorOf(caller), details: { namespace: row.namespace } });
  });
}
