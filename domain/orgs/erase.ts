import type { EntityManager } from '@mikro-orm/postgresql';
import { query, sql } from '../sql.ts';

// Removes every row of an org. Tables written by each save carry no foreign key (see 0002_memories), so
// they are cleared here first; the org's delete then cascades to namespaces, memberships, credentials,
// recalls and entities. Returns how many memories there were.
export async function eraseOrg(em: EntityManager, orgId: string): Promise<number> {
  await query(em, sql`delete from memory_terms where org_id = ${orgId}`);
  await query(em, sql`delete from memory_embeddings where org_id = ${orgId}`);
  const memories = await query(em, sql<{ id: string }>`delete from memories where org_id = ${orgId} returning id`);
  await query(em, sql`delete from counters where scope_id = ${orgId} or scope_id in (select id from namespaces where org_id = ${orgId})`);
  await query(em, sql`delete from events where org_id = ${orgId}`);
  await query(em, sql`delete from audit_events where org_id = ${orgId}`);
  await query(em, sql`delete from idempotency_keys where org_id = ${orgId}`);
  await query(em, sql`delete from outbox where org_id = ${orgId}`);
  await query(em, sql`update users set last_org_id = null where last_org_id = ${orgId}`);
  await query(em, sql`delete from orgs where id = ${orgId}`);
  return memories.length;
}
