import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { newId } from '../ids.ts';
import { query, sql } from '../sql.ts';

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

// Audit rows as one INSERT, so a hot write path can embed it in its own statement.
export function auditInsert(inputs: AuditInput[]): RawBuilder<unknown> {
  return sql`insert into audit_events (id, org_id, action, target_id, actor_user_id, actor_token, details, created_at)
    select id, o, a, t, u, c, d, now() from unnest(
      ${inputs.map(() => newId())}::uuid[], ${inputs.map((i) => i.orgId)}::uuid[], ${inputs.map((i) => i.action)}::text[],
      ${inputs.map((i) => i.targetId ?? null)}::text[], ${inputs.map((i) => i.actor.userId)}::uuid[],
      ${inputs.map((i) => i.actor.credentialId)}::uuid[], ${inputs.map((i) => JSON.stringify(i.details ?? {}))}::jsonb[]) as r(id,
          o, a, t, u, c, d)`;
}

// Called inside the transaction of the write it describes, so the row exists exactly when the write does.
export async function recordAudit(em: EntityManager, input: AuditInput): Promise<void> {
  await query(em, auditInsert([input]));
}
