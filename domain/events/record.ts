import type { EntityManager } from '@mikro-orm/postgresql';
import { query, sql } from '../sql.ts';

export type EventType = 'memory.saved' | 'memory.updated' | 'memory.deleted';

// Appends a domain event in the caller's transaction: it exists exactly when the change does, and the
// webhook dispatcher reads events in commit order from this table.
export async function recordEvents(em: EntityManager, orgId: string, events: { type: EventType; data: unknown }[]): Promise<void> {
  if (events.length === 0) return;
  await query(
    em,
    sql`insert into events (org_id, type, data)
        select ${orgId}, t, d from unnest(${events.map((e) => e.type)}::text[], ${events.map((e) => JSON.stringify(e.data))}::jsonb[]) as u(t, d)`,
  );
}
