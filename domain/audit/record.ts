import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../ids.ts';
import { AuditEvent } from './entities.ts';

export interface Actor {
  userId: string | null;
  credentialId: string | null;
}

export interface AuditInput {
  orgId: string;
  action: string;
  targetId?: string | null;
  actor: Actor;
  details?: Record<string, unknown>;
}

// Called inside the transaction of the write it describes, so the row exists exactly when the write does.
export function recordAudit(em: EntityManager, input: AuditInput): void {
  em.create(AuditEvent, {
    id: newId(),
    orgId: input.orgId,
    action: input.action,
    targetId: input.targetId ?? null,
    actorUserId: input.actor.userId,
    actorToken: input.actor.credentialId,
    details: input.details ?? {},
    createdAt: new Date(),
  });
}
