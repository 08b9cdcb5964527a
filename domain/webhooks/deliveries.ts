import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../ids.ts';
import { query, queryOne, sql, toDate, toDateOrNull } from '../sql.ts';
import { secretOf } from './secrets.ts';

export interface PendingDelivery {
  id: string;
  orgId: string;
  body: string;
  endpointId: string;
  url: string;
  secret: string;
  // When the delivery was made from its event: the start of its lag.
  createdAt: Date;
}

export type AttemptResult =
  { statusCode: number; error?: undefined; durationMs: number } | { statusCode?: undefined; error: string; durationMs: number };
export type Next = 'done' | 'retry' | 'stop';

// The delivery if it should still be attempted; a delivery whose endpoint is disabled is cancelled.
export async function deliveryToAttempt(em: EntityManager, deliveryId: string, escrowKey: Buffer): Promise<PendingDelivery | null> {
  const row = await queryOne(
    em,
    // By id alone (webhook_deliveries_id_idx): the workflow carries only the id. The org's key from here on.
    sql<{
      id: string;
      org_id: string;
      body: string;
      endpoint_id: string;
      url: string;
      secret: string | null;
      secret_sealed: Buffer | null;
      enabled: boolean;
      created_at: string;
    }>`
      select d.id, d.org_id, d.body, d.endpoint_id, e.url, e.secret, e.secret_sealed, e.enabled, d.created_at
        from webhook_deliveries d join webhook_endpoints e on e.org_id = d.org_id and e.id = d.endpoint_id
       where d.id = ${deliveryId} and d.status = 'pending'`,
  );
  if (!row) return null;
  if (!row.enabled) {
    await query(
      em,
      sql`update webhook_deliveries set status = 'cancelled', completed_at = now() where org_id = ${row.org_id} and id = ${deliveryId}`,
    );
    return null;
  }
  let secret: string;
  try {
    secret = secretOf(escrowKey, { orgId: row.org_id, id: row.endpoint_id, secret: row.secret, secretSealed: row.secret_sealed });
  } catch {
    // Sealed under another key (BYOK_ESCROW_KEY changed): no retry can sign it, so it fails now, saying why.
    await query(
      em,
      sql`with failed as (
          update webhook_deliveries set status = 'failed', attempt_count = attempt_count + 1, completed_at = now()
           where org_id = ${row.org_id} and id = ${deliveryId} returning org_id, id, attempt_count)
        insert into webhook_attempts (id, org_id, delivery_id, attempt, error, duration_ms, created_at)
        select ${newId()}::uuid, org_id, id, attempt_count, ${UNSEALABLE}::text, 0, now() from failed`,
    );
    return null;
  }
  return {
    id: row.id,
    orgId: row.org_id,
    body: row.body,
    endpointId: row.endpoint_id,
    url: row.url,
    secret,
    createdAt: toDate(row.created_at),
  };
}

const UNSEALABLE = "the endpoint's signing secret cannot be unsealed with this server's BYOK_ESCROW_KEY; register the endpoint again";

// An endpoint that has failed every attempt for this long (and at least this many times) is disabled.
const DISABLE_AFTER_FAILURES = 20;
const DISABLE_AFTER_DAYS = 3;

// Records one attempt and what follows from it: a 2xx finishes the delivery, 410 disables the endpoint,
// anything else is retried until the schedule runs out. Endpoint health is kept in the same transaction.
export async function recordAttempt(
  em: EntityManager,
  delivery: PendingDelivery,
  attempt: number,
  result: AttemptResult,
  final: boolean,
): Promise<Next> {
  return em.transactional(async (tx) => {
    await query(
      tx,
      sql`insert into webhook_attempts (id, org_id, delivery_id, attempt, status_code, error, duration_ms, created_at)
          values (${newId()}, ${delivery.orgId}, ${delivery.id}, ${attempt}, ${result.statusCode ?? null}, ${result.error ?? null},
            ${Math.round(result.durationMs)}, now())`,
    );
    const ok = result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    if (ok) {
      await query(
        tx,
        sql`update webhook_endpoints set last_success_at = now(), consecutive_failures = 0
          where org_id = ${delivery.orgId} and id = ${delivery.endpointId}`,
      );
      await query(
        tx,
        sql`update webhook_deliveries set status = 'succeeded', attempt_count = ${attempt}, completed_at = now()
          where org_id = ${delivery.orgId} and id = ${delivery.id}`,
      );
      return 'done';
    }
    await query(
      tx,
      sql`update webhook_endpoints set last_failure_at = now(), consecutive_failures = consecutive_failures + 1,
            enabled = enabled and not ${gone} and not (consecutive_failures + 1 >= ${DISABLE_AFTER_FAILURES}
              and coalesce(last_success_at, created_at) < now() - make_interval(days => ${DISABLE_AFTER_DAYS}))
          where org_id = ${delivery.orgId} and id = ${delivery.endpointId}`,
    );
    const stop = final || gone;
    await query(
      tx,
      sql`update webhook_deliveries set attempt_count = ${attempt}, status = ${stop ? 'failed' : 'pending'},
          completed_at = ${stop ? sql`now()` : sql`null`} where org_id = ${delivery.orgId} and id = ${delivery.id}`,
    );
    return stop ? 'stop' : 'retry';
  });
}

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled'] as const;

export interface DeliveryView {
  id: string;
  eventId: number;
  eventType: string;
  status: (typeof DELIVERY_STATUSES)[number];
  attemptCount: number;
  createdAt: number;
  completedAt: number | null;
  attempts: { attempt: number; statusCode: number | null; error: string | null; durationMs: number; at: number }[];
}

export async function listDeliveries(em: EntityManager, orgId: string, endpointId: string, limit: number): Promise<DeliveryView[]> {
  const rows = await query(
    em,
    sql<{
      id: string;
      event_id: string;
      event_type: string;
      status: DeliveryView['status'];
      attempt_count: number;
      created_at: string;
      completed_at: string | null;
      attempts: { attempt: number; status_code: number | null; error: string | null; duration_ms: number; created_at: string }[];
    }>`
      select d.id, d.event_id, d.event_type, d.status, d.attempt_count, d.created_at, d.completed_at,
             coalesce((select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'status_code', a.status_code, 'error', a.error,
               'duration_ms', a.duration_ms, 'created_at', a.created_at) order by a.attempt)
                         from webhook_attempts a where a.org_id = d.org_id and a.delivery_id = d.id), '[]') as attempts
        from webhook_deliveries d where d.endpoint_id = ${endpointId} and d.org_id = ${orgId}
       order by d.created_at desc, d.id desc limit ${limit}`,
  );
  return rows.map((r) => ({
    id: r.id,
    eventId: Number(r.event_id),
    eventType: r.event_type,
    status: r.status,
    attemptCount: r.attempt_count,
    createdAt: toDate(r.created_at).getTime(),
    completedAt: toDateOrNull(r.completed_at)?.getTime() ?? null,
    attempts: r.attempts.map((a) => ({
      attempt: a.attempt,
      statusCode: a.status_code,
      error: a.error,
      durationMs: a.duration_ms,
      at: toDate(a.created_at).getTime(),
    })),
  }));
}
