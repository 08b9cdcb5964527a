import type { EntityManager } from '@mikro-orm/postgresql';
import { auditNames, type AuditActor, type AuditCredential } from '../audit/names.ts';
import { query, sql, toDate } from '../sql.ts';
import { getMemory } from './read.ts';

export interface MemoryHistory {
  id: string;
  // metadata.history: one entry per content change (the latest HISTORY_ENTRIES_KEPT); the prior text is not kept.
  edits: unknown[];
  // A page of the audit events about this memory, oldest first.
  events: {
    id: string;
    action: string;
    actorUserId: string | null;
    actorToken: string | null;
    createdAt: number;
    details: Record<string, unknown>;
    // Who acted and with what, by name (domain/audit/names.ts).
    actor: AuditActor | null;
    token: AuditCredential | null;
  }[];
  // The last event of the page when more follow: the next page starts after it.
  nextAfter: string | null;
}

// The memory's edits, and `limit` of its audit events after the event `after` (from the first when not given).
export async function memoryHistory(
  em: EntityManager,
  orgId: string,
  id: string,
  page: { limit: number; after?: string | undefined },
): Promise<MemoryHistory> {
  const memory = await getMemory(em, orgId, id);
  const events = await query(
    em,
    sql<{
      id: string;
      action: string;
      actor_user_id: string | null;
      actor_token: string | null;
      created_at: string;
      details: Record<string, unknown>;
    }>`
      select e.id, e.action, e.actor_user_id, e.actor_token, e.created_at, e.details from audit_events e
       where e.org_id = ${orgId} and e.target_id = ${id}
         ${page.after ? sql`and (e.created_at, e.id) > (select created_at, id from audit_events where org_id = ${orgId} and id = ${page.after})` : sql``}
       order by e.created_at, e.id limit ${page.limit + 1}`,
  );
  const shown = events.slice(0, page.limit);
  const names = await auditNames(
    em,
    orgId,
    shown.map((e) => ({ action: e.action, targetId: null, actorUserId: e.actor_user_id, actorToken: e.actor_token, details: e.details })),
  );
  return {
    id,
    edits: Array.isArray(memory.metadata.history) ? memory.metadata.history : [],
    events: shown.map((e, i) => ({
      id: e.id,
      action: e.action,
      actorUserId: e.actor_user_id,
      actorToken: e.actor_token,
      createdAt: toDate(e.created_at).getTime(),
      details: e.details,
      actor: names[i]!.actor,
      token: names[i]!.token,
    })),
    nextAfter: events.length > page.limit ? shown.at(-1)!.id : null,
  };
}
