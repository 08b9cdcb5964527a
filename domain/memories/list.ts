import type { EntityManager } from '@mikro-orm/postgresql';
import { readCounters } from '../counters.ts';
import { query, queryOne, sql } from '../sql.ts';
import { NAMESPACE_COUNTERS, ORG_COUNTERS } from '../store/counters.ts';
import { compileFilters, type CompiledFilters, type MemoryFilters } from '../store/filters.ts';
import { LIST_COUNT_MAX_ORG_MEMORIES } from './limits.ts';
import type { ListOrder } from './orders.ts';
import { MEMORIES_IN_NAMESPACES, MEMORY_COLUMNS, memoryView, type MemoryRow, type MemoryView } from '../store/model.ts';

const ORDER_BY = {
  newest: sql`m.created_at desc, m.id desc`,
  oldest: sql`m.created_at asc, m.id asc`,
  updated_desc: sql`m.updated_at desc, m.id desc`,
  updated_asc: sql`m.updated_at asc, m.id asc`,
} as const;

export interface ListQuery extends MemoryFilters {
  limit: number;
  offset: number;
  order: ListOrder;
}

export interface ListResult {
  memories: MemoryView[];
  total: number | null;
}

export async function listMemories(em: EntityManager, orgId: string, q: ListQuery): Promise<ListResult> {
  const filters = await compileFilters(em, orgId, q);
  if (!filters.satisfiable) return { memories: [], total: 0 };
  // A filtered list of a large org takes other paths (below); the org's size comes from its counters.
  const orgSize = filters.trivial ? 0 : ((await readCounters(em, orgId)).get(ORG_COUNTERS.live) ?? 0);
  const rows =
    (orgSize > LIST_WINDOWS[0]! ? await windowedPage(em, orgId, filters, q) : null) ??
    (await query(
      em,
      sql<MemoryRow>`select ${MEMORY_COLUMNS} from ${MEMORIES_IN_NAMESPACES}
        where ${filters.where} order by ${ORDER_BY[q.order]} limit ${q.limit} offset ${q.offset}`,
    ));
  return { memories: rows.map(memoryView), total: await countMatching(em, orgId, filters, orgSize) };
}

// The planner cannot estimate a tag or metadata filter (jsonb and array containment count as a fixed 0.1% of
// rows), so for one that matches many memories it fetches every match and sorts them: 536 ms at 1,000,000
// memories for a metadata filter matching 5%. A filtered page of a large org is therefore first looked for
// among the first rows of the list's order (the walk down its index that the planner declines), in windows
// of these sizes; a full page found there is the page. Only a rare match reaches the general query.
const LIST_WINDOWS = [2_000, 16_000];

async function windowedPage(em: EntityManager, orgId: string, filters: CompiledFilters, q: ListQuery): Promise<MemoryRow[] | null> {
  const scope = filters.namespaceId ? sql`m.org_id = ${orgId} and m.namespace_id = ${filters.namespaceId}` : sql`m.org_id = ${orgId}`;
  for (const size of LIST_WINDOWS) {
    if (q.offset + q.limit > size / 4) continue;
    const rows = await query(
      em,
      sql<MemoryRow>`select ${MEMORY_COLUMNS} from (select * from memories m where ${scope} order by ${ORDER_BY[q.order]} limit ${size}) m
          join namespaces n on n.org_id = m.org_id and n.id = m.namespace_id
         where ${filters.where} order by ${ORDER_BY[q.order]} limit ${q.limit} offset ${q.offset}`,
    );
    if (rows.length === q.limit) return rows;
  }
  return null;
}

// Unfiltered totals come from the counters; filtered ones are counted, except in an org too large for a count
// to stay cheap, where the total is reported as unknown (null) rather than making its list slow.
async function countMatching(em: EntityManager, orgId: string, filters: CompiledFilters, orgSize: number): Promise<number | null> {
  if (filters.trivial) {
    const counters = await readCounters(em, orgId, filters.namespaceId ?? orgId);
    return counters.get(filters.namespaceId ? NAMESPACE_COUNTERS.live : ORG_COUNTERS.live) ?? 0;
  }
  if (orgSize > LIST_COUNT_MAX_ORG_MEMORIES) return null;
  const row = await queryOne(em, sql<{ n: string }>`select count(*) as n from memories m where ${filters.where}`);
  return Number(row!.n);
}
