import type { EntityManager } from '@mikro-orm/postgresql';
import { escapeLike } from '../sql.ts';
import type { FilterQuery } from '@mikro-orm/core';
import { AuditEvent } from './tables.ts';

export interface AuditQuery {
  action?: string | undefined;
  actor?: string | undefined;
  target?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
  limit: number;
  offset: number;
}

export async function listAuditEvents(em: EntityManager, orgId: string, q: AuditQuery): Promise<AuditEvent[]> {
  const where: FilterQuery<AuditEvent> = { orgId };
  if (q.action !== undefined) where.action = { $like: `${escapeLike(q.action)}%` };
  if (q.actor !== undefined) where.actorUserId = q.actor;
  if (q.target !== undefined) where.targetId = q.target;
  if (q.since !== undefined || q.until !== undefined) {
    where.createdAt = {
      ...(q.since !== undefined ? { $gte: new Date(q.since) } : {}),
      ...(q.until !== undefined ? { $lte: new Date(q.until) } : {}),
    };
  }
  return em.find(AuditEvent, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: q.limit, offset: q.offset });
}
