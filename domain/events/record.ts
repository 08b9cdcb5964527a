import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { query, sql } from '../sql.ts';

export type EventType = 'memory.saved' | 'memory.updated' | 'memory.deleted';

export interface DomainEvent {
  type: EventType;
  data: unknown;
}

// The events as one INSERT, so a hot write path can embed it in its own statement.
export function eventsInsert(orgId: string, events: DomainEvent[]): RawBuilder<unknown> {
  return sql`insert into events (org_id, type, data)
    select ${orgId}, t, d from unnest(${events.map((e) => e.type)}::text[], ${events.map((e) => JSON.stringify(e.data))}::jsonb[]) as u(t, d)`;
}

// Appends domain events in the caller's transaction: they exist exactly when the change does, and the
// webhook dispatcher reads them in commit order from this table.
export async function recordEvents(em: EntityManager, orgId: string, events: DomainEvent[]): Promise<void> {
  if (events.length > 0) await query(em, eventsInsert(orgId, events));
}
