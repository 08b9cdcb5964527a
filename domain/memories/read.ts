import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../errors.ts';
import { queryOne, sql } from '../sql.ts';
import { MEMORIES_IN_NAMESPACES, MEMORY_COLUMNS, memoryView, type MemoryRow, type MemoryView } from '../store/model.ts';

async function findMemory(em: EntityManager, orgId: string, id: string): Promise<MemoryView | null> {
  const row = await queryOne(
    em,
    sql<MemoryRow>`select ${MEMORY_COLUMNS} from ${MEMORIES_IN_NAMESPACES} where m.id = ${id} and m.org_id = ${orgId}`,
  );
  return row ? memoryView(row) : null;
}

export async function getMemory(em: EntityManager, orgId: string, id: string): Promise<MemoryView> {
  const memory = await findMemory(em, orgId, id);
  if (!memory) throw notFound('memory', id);
  return memory;
}
