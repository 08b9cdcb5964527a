import type { EntityManager } from '@mikro-orm/postgresql';
import { readCounters } from '../counters.ts';
import { query, queryOne, sql } from '../sql.ts';
import { NAMESPACE_MEMORIES, ORG_COUNTERS } from './counters.ts';
import { compileFilters, type MemoryFilters } from './filters.ts';
import { LIST_COUNT_MAX_ORG_MEMORIES } from './limits.ts';
import { MEMORIES_IN_NAMESPACES, MEMORY_COLUMNS, memoryView, type MemoryRow, type MemoryView } from './model.ts';

export const LIST_ORDERS = ['newest', 'oldest', 'updated_desc', 'updated_asc'] as const;
export type ListOrder = (typeof LIST_ORDERS)[number];

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
  const rows = await query(
    em,
    sql<MemoryRow>`select ${MEMORY_COLUMNS} from ${MEMORIES_IN_NAMESPACES}
        where ${filters.where} order by ${ORDER_BY[q.order]} limit ${q.limit} offset ${q.offset}`,
  );
  return { memories: rows.map(memoryView), total: await countMatching(em, orgId, filters) };
}

// Unfiltered totals come from the counters; filtered ones are counted, except in an org too large for a count
// to stay cheap, where the total is reported as unknown (null) rather than making its list slow.
async function countMatching(em: EntityManager, orgId: string, filters: Awaited<ReturnType<typeof compileFilters>>): Promise<number | null> {
  if (filters.trivial) {
    const counters = await readCounters(em, orgId, filters.namespaceId ?? orgId);
    return counters.get(filters.namespaceId ? NAMESPACE_MEMORIES : ORG_COUNTERS.live) ?? 0;
  }
  if (((await readCounters(em, orgId)).get(ORG_COUNTERS.live) ?? 0) > LIST_COUNT_MAX_ORG_MEMORIES) return null;
  const row = await queryOne(em, sql<{ n: string }>`select count(*) as n from memories m where ${filters.where}`);
  return Number(row!.n);
}
