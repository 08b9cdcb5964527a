import type { EntityManager } from '@mikro-orm/postgresql';
import { query, sql, toDate } from '../sql.ts';
import { getMemory } from './read.ts';

export interface MemoryHistory {
  id: string;
  // metadata.history: one entry per content change; the prior text is not kept.
  edits: unknown[];
  // Every audit event about this memory, oldest first.
  events: { id: string; action: string; actorUserId: string | null; actorToken: string | null; createdAt: number; details: Record<string, unknown> }[];
}

export async function memoryHistory(em: EntityManager, orgId: string, id: string): Promise<MemoryHistory> {
  const memory = await getMemory(em, orgId, id);
  const events = await query(
    em,
    sql<{ id: string; action: string; actor_user_id: string | null; actor_token: string | null; created_at: string; details: Record<string, unknown> }>`
      select id, action, actor_user_id, actor_token, created_at, details from audit_events
       where org_id = ${orgId} and target_id = ${id} order by created_at, id`,
  );
  return {
    id,
    edits: Array.isArray(memory.metadata.history) ? memory.metadata.history : [],
    events: events.map((e) => ({ id: e.id, action: e.action, actorUserId: e.actor_user_id, actorToken: e.actor_token, createdAt: toDate(e.created_at).getTime(), details: e.details })),
  };
}
