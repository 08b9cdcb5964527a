import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { query, sql } from '../sql.ts';

export type EventType = 'memory.saved' | 'memory.updated' | 'memory.deleted' | 'conversation.extracted';

export interface DomainEvent {
  orgId: string;
  type: EventType;
  data: unknown;
}

// Only events some enabled endpoint of the org subscribes to are kept: an event nobody would receive costs
// a row, its index entries and the relay's pass over it, on every save of every org without webhooks.
export const subscribed = (orgId: RawBuilder<unknown>, type: RawBuilder<unknown>): RawBuilder<unknown> =>
  sql`exists (select 1 from webhook_endpoints w where w.org_id = ${orgId} and w.enabled and ${type} = any(w.events))`;

// The events as one INSERT, so a write path can embed it in its own statement.
function eventsInsert(events: DomainEvent[]): RawBuilder<unknown> {
  return sql`insert into events (org_id, type, data)
    select o, t, d from unnest(${events.map((e) => e.orgId)}::uuid[], ${events.map((e) => e.type)}::text[],
      ${events.map((e) => JSON.stringify(e.data))}::jsonb[]) with ordinality as u(o, t, d, i)
     where ${subscribed(sql`u.o`, sql`u.t`)}
    order by i`;
}

// Appends domain events in the caller's transaction: they exist exactly when the change does, and the
// webhook dispatcher reads them in commit order from this table.
export async function recordEvents(em: EntityManager, events: DomainEvent[]): Promise<void> {
  if (events.length > 0) await query(em, eventsInsert(events));
}
