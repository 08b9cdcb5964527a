import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { recordAudit } from '../audit/record.ts';
import { query, sql, toDate } from '../sql.ts';

export interface RecallInput {
  memoryIds: string[];
  source?: string | undefined;
  query?: string | undefined;
}

// Logs that memories were recalled. Ids that cannot be linked (deleted, another org's) are skipped.
export async function logRecall(em: EntityManager, caller: Caller, input: RecallInput): Promise<{ logged: number; skipped: number }> {
  const ids = [...new Set(input.memoryIds)];
  return em.transactional(async (tx) => {
    const inserted = await query(
      tx,
      sql<{ id: string }>`insert into recalls (id, org_id, memory_id, source, query, recalled_by, recalled_at)
          select gen_random_uuid(), ${caller.orgId}, m.id, ${input.source ?? null}, ${input.query ?? null}, ${caller.userId}, now()
            from memories m where m.org_id = ${caller.orgId} and m.id = any(${ids}::uuid[])
          returning id`,
    );
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'recall.log',
      targetId: null,
      actor: actorOf(caller),
      details: { logged: inserted.length },
    });
    return { logged: inserted.length, skipped: input.memoryIds.length - inserted.length };
  });
}

export interface RecallEntry {
  id: string;
  memoryId: string;
  source: string | null;
  query: string | null;
  recalledAt: number;
  recalledBy: string | null;
}

export async function listRecalls(
  em: EntityManager,
  orgId: string,
  q: { memoryId?: string | undefined; limit: number },
): Promise<RecallEntry[]> {
  const rows = await query(
    em,
    sql<{ id: string; memory_id: string; source: string | null; query: string | null; recalled_at: string; recalled_by: string | null }>`
      select id, memory_id, source, query, recalled_at, recalled_by from recalls
       where org_id = ${orgId} ${q.memoryId ? sql`and memory_id = ${q.memoryId}` : sql``}
       order by recalled_at desc, id desc limit ${q.limit}`,
  );
  return rows.map((r) => ({
    id: r.id,
    memoryId: r.memory_id,
    source: r.source,
    query: r.query,
    recalledAt: toDate(r.recalled_at).getTime(),
    recalledBy: r.recalled_by,
  }));
}
