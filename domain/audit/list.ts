import type { EntityManager } from '@mikro-orm/postgresql';
import { escapeLike, query, sql, toDate } from '../sql.ts';

export interface AuditQuery {
  action?: string | undefined;
  actor?: string | undefined;
  target?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  limit: number;
  offset: number;
}

export interface AuditEvent {
  id: string;
  action: string;
  targetId: string | null;
  actorUserId: string | null;
  actorToken: string | null;
  details: Record<string, unknown>;
  createdAt: Date;
}

// The org's audit rows that match every filter given, newest first.
export async function listAuditEvents(em: EntityManager, orgId: string, q: AuditQuery): Promise<AuditEvent[]> {
  const where = [sql`org_id = ${orgId}`];
  if (q.action !== undefined) where.push(sql`action like ${`${escapeLike(q.action)}%`}`);
  if (q.actor !== undefined) where.push(sql`actor_user_id = ${q.actor}`);
  if (q.target !== undefined) where.push(sql`target_id = ${q.target}`);
  if (q.since !== undefined) where.push(sql`created_at >= ${new Date(q.since).toISOString()}::timestamptz`);
  if (q.until !== undefined) where.push(sql`created_at <= ${new Date(q.until).toISOString()}::timestamptz`);
  const rows = await query(
    em,
    sql<Omit<AuditEvent, 'createdAt'> & { createdAt: string }>`select id, action, target_id as "targetId",
      actor_user_id as "actorUserId", actor_token as "actorToken", details, created_at as "createdAt"
      from audit_events where ${sql.join(where, sql` and `)} order by created_at desc, id desc limit ${q.limit} offset ${q.offset}`,
  );
  return rows.map((r) => ({ ...r, createdAt: toDate(r.createdAt) }));
}
