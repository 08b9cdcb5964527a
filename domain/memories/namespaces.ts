import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../ids.ts';
import { queryOne, sql } from '../sql.ts';

export const DEFAULT_NAMESPACE = 'default';

export async function namespaceIdOf(em: EntityManager, orgId: string, name: string): Promise<string | null> {
  const row = await queryOne(em, sql<{ id: string }>`select id from namespaces where org_id = ${orgId} and name = ${name}`);
  return row?.id ?? null;
}

// A namespace is created the first time a memory names it; concurrent first uses agree on one row.
export async function ensureNamespace(em: EntityManager, orgId: string, name: string): Promise<string> {
  const existing = await namespaceIdOf(em, orgId, name);
  if (existing) return existing;
  const row = await queryOne(
    em,
    // `do update` (not `do nothing`) so that a row committed by a racing first use is returned too; it
    // sets a column outside every unique key so the row lock taken is the weaker NO KEY UPDATE.
    sql<{ id: string }>`insert into namespaces (id, org_id, name, metadata, created_at, updated_at)
        values (${newId()}, ${orgId}, ${name}, '{}', now(), now())
        on conflict (org_id, name) do update set updated_at = namespaces.updated_at returning id`,
  );
  return row!.id;
}
