import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { requireRole } from '../accounts/roles.ts';
import { recordAudit } from '../audit/record.ts';
import { bumpCounters } from '../counters.ts';
import { forgetEmbeddings } from '../embeddings/store.ts';
import { recordEvents } from '../events/record.ts';
import { notFound } from '../errors.ts';
import { ORG_COUNTERS } from '../memories/counters.ts';
import { termFrequencies } from '../search/analyzer.ts';
import { query, queryOne, sql } from '../sql.ts';

const BATCH = 500;

// Deletes the project and every memory in it, irreversibly, in one transaction: postings (found by
// re-analysing each memory, batch by batch), counters, one memory.deleted per memory, audit project.delete.
export async function deleteProject(em: EntityManager, caller: Caller, id: string): Promise<{ memories: number }> {
  return em.transactional(async (tx) => {
    const project = await queryOne(tx, sql<{ name: string }>`select name from namespaces where id = ${id} and org_id = ${caller.orgId} for update`);
    if (!project) throw notFound();
    requireRole(caller, 'admin');
    let total = 0;
    let bytes = 0;
    let docLen = 0;
    let live = 0;
    for (;;) {
      const rows = await query(
        tx,
        sql<{ id: string; content: string; content_bytes: number; doc_len: number; superseded_by: string | null }>`
          delete from memories where id in (select id from memories where namespace_id = ${id} limit ${BATCH})
          returning id, content, content_bytes, doc_len, superseded_by`,
      );
      if (rows.length === 0) break;
      const terms: string[] = [];
      const owners: string[] = [];
      for (const row of rows) {
        for (const term of termFrequencies(row.content).terms.keys()) {
          terms.push(term);
          owners.push(row.id);
        }
        bytes += row.content_bytes;
        // Superseded memories left the live counts when they were merged.
        if (!row.superseded_by) {
          live += 1;
          docLen += row.doc_len;
        }
      }
      await query(
        tx,
        sql`delete from memory_terms mt using unnest(${terms}::text[], ${owners}::uuid[]) as u(t, m)
             where mt.org_id = ${caller.orgId} and mt.term = u.t and mt.memory_id = u.m`,
      );
      await forgetEmbeddings(tx, rows.map((r) => r.id));
      await recordEvents(tx, rows.map((r) => ({ orgId: caller.orgId, type: 'memory.deleted' as const, data: { id: r.id, namespace: project.name } })));
      total += rows.length;
    }
    await bumpCounters(tx, [
      { scopeId: caller.orgId, name: ORG_COUNTERS.live, delta: -live },
      { scopeId: caller.orgId, name: ORG_COUNTERS.bytes, delta: -bytes },
      { scopeId: caller.orgId, name: ORG_COUNTERS.docLen, delta: -docLen },
    ]);
    await query(tx, sql`delete from counters where scope_id = ${id}`);
    await query(tx, sql`delete from namespaces where id = ${id}`);
    await recordAudit(tx, { orgId: caller.orgId, action: 'project.delete', targetId: id, actor: actorOf(caller), details: { name: project.name, memories: total } });
    return { memories: total };
  });
}
