import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { auditInsert, type Actor } from '../audit/record.ts';
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
    if ((await deleteMemories(tx, caller.orgId, [id], actorOf(caller))) > 0) return;
    const tombstone = await queryOne(
      tx,
      sql`select 1 from audit_events where org_id = ${caller.orgId} and target_id = ${id} and action = 'memory.delete' limit 1`,
    );
    if (!tombstone) throw notFound('memory', id);
  });
}

// Deletes the org's memories `ids` that are there, in the caller's transaction: their postings and vectors, the
// counters, one memory.deleted event and one audit row each (with `details`). Returns how many it deleted.
export async function deleteMemories(
  tx: EntityManager,
  orgId: string,
  ids: string[],
  actor: Actor,
  details: Record<string, unknown> = {},
): Promise<number> {
  const rows = await query(
    tx,
    sql<{
      id: string;
      stored_bytes: number;
      doc_len: number;
      namespace_id: string;
      namespace: string;
      superseded_by: string | null;
      thread: boolean;
    }>`
      select m.id, m.stored_bytes, m.doc_len, m.namespace_id, n.name as namespace, m.superseded_by, m.metadata ? 'parent_ref' as thread
        from ${MEMORIES_IN_NAMESPACES}
       where m.org_id = ${orgId} and m.id = any(${ids}::uuid[]) for update of m`,
  );
  if (rows.length === 0) return 0;
  const gone = rows.map((r) => r.id);
  await unindexMemories(tx, orgId, gone);
  await forgetEmbeddings(tx, orgId, gone);
  // The chunks after them in their threads were searched with them as context: the curator mixes theirs again.
  const threaded = rows.filter((r) => r.thread).map((r) => r.id);
  if (threaded.length > 0) await remixChunksAfter(tx, orgId, threaded);
  await query(tx, sql`delete from memories where org_id = ${orgId} and id = any(${gone}::uuid[])`);
  await countDeleted(
    tx,
    rows.map((r) => ({
      footprint: { orgId, namespaceId: r.namespace_id, bytes: r.stored_bytes, docLen: r.doc_len },
      superseded: r.superseded_by !== null,
    })),
  );
  await recordEvents(
    tx,
    rows.map((r) => ({ orgId, type: 'memory.deleted' as const, data: { id: r.id, namespace: r.namespace } })),
  );
  await query(
    tx,
    auditInsert(
      rows.map((r) => ({ orgId, action: 'memory.delete', targetId: r.id, actor, details: { namespace: r.namespace, ...details } })),
    ),
  );
  return rows.length;
}
