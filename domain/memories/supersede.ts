import type { EntityManager } from '@mikro-orm/postgresql';
import { bumpCounters, sumDeltas } from '../counters.ts';
import { query, sql } from '../sql.ts';
import { supersededDeltas } from '../store/counters.ts';
import { MEMORY_COLUMNS, memoryRecord, memoryView, type MemoryRow, type MemoryView } from '../store/model.ts';
import { unindexMemories } from '../store/postings.ts';
import { remixChunksAfter } from '../store/thread-context.ts';
import { recordEvents } from '../webhooks/event-log.ts';

// Memories replaced, in the caller's transaction: each marked superseded by its successor (a consolidation's
// merged memory, an extraction's new version) or by itself when nothing replaces it (an extraction's DELETE), at
// superseded_at (what a search as of an earlier time reads: domain/search/as-of.ts). A superseded memory is kept for
// the record, out of search, lists (unless asked for) and the live counts; it leaves its thread, whose later chunks
// are mixed with their new context; a memory.updated event each. `successors` maps each id to its successor.
// Memories already superseded are left as they are.
export async function supersedeMemories(tx: EntityManager, orgId: string, successors: Map<string, string>): Promise<MemoryView[]> {
  if (successors.size === 0) return [];
  const ids = [...successors.keys()];
  const rows = await query(
    tx,
    sql<MemoryRow & { namespace_id: string; stored_bytes: number; doc_len: number }>`
      update memories m set superseded_by = s.successor, superseded_at = greatest(now(), m.updated_at + interval '1 millisecond'),
             updated_at = greatest(now(), m.updated_at + interval '1 millisecond')
        from unnest(${ids}::uuid[], ${ids.map((id) => successors.get(id)!)}::uuid[]) as s(id, successor), namespaces n
       where m.org_id = ${orgId} and m.id = s.id and m.superseded_by is null and n.org_id = m.org_id and n.id = m.namespace_id
       returning ${MEMORY_COLUMNS}, m.namespace_id, m.stored_bytes, m.doc_len`,
  );
  const gone = rows.map((r) => r.id);
  await unindexMemories(tx, orgId, gone);
  await remixChunksAfter(tx, orgId, gone);
  await bumpCounters(
    tx,
    sumDeltas(rows.flatMap((r) => supersededDeltas({ orgId, namespaceId: r.namespace_id, bytes: r.stored_bytes, docLen: r.doc_len }))),
  );
  const views = rows.map(memoryView);
  await recordEvents(
    tx,
    views.map((v) => ({ orgId, type: 'memory.updated' as const, data: memoryRecord(v) })),
  );
  return views;
}
