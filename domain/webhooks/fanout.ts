import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../ids.ts';
import { enqueueJobs, type JobRequest } from '../outbox/enqueue.ts';
import { query, sql, toDate } from '../sql.ts';

export const WEBHOOK_DELIVERY_JOB = 'webhookDelivery';

export interface DeliveryArgs {
  deliveryId: string;
  // Delays in seconds before each attempt (WEBHOOK_RETRY_SCHEDULE at the time the delivery was made).
  schedule: number[];
}

// Turns committed domain events into deliveries: one per enabled endpoint of the org subscribed to the
// event's type, each with its body fixed now (retries send the same bytes) and a delivery job in the outbox,
// all in the transaction that marks the events dispatched. Returns how many events it took.
export async function fanOutEvents(em: EntityManager, schedule: number[], limit = 200): Promise<number> {
  return em.transactional(async (tx) => {
    const events = await query(
      tx,
      sql<{ id: string; org_id: string; type: string; data: unknown; created_at: string }>`
        select id, org_id, type, data, created_at from events where dispatched_at is null order by id limit ${limit}
        for update skip locked`,
    );
    if (events.length === 0) return 0;
    const orgIds = [...new Set(events.map((e) => e.org_id))];
    const endpoints = await query(
      tx,
      sql<{
        id: string;
        org_id: string;
        events: string[];
      }>`select id, org_id, events from webhook_endpoints where enabled and org_id = any(${orgIds}::uuid[])`,
    );
    const jobs: JobRequest[] = [];
    for (const event of events) {
      for (const endpoint of endpoints) {
        if (endpoint.org_id !== event.org_id || !endpoint.events.includes(event.type)) continue;
        const deliveryId = newId();
        const body = JSON.stringify({ type: event.type, timestamp: toDate(event.created_at).toISOString(), data: event.data });
        await query(
          tx,
          sql`insert into webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, body, created_at)
              values (${deliveryId}, ${event.org_id}, ${endpoint.id}, ${event.id}, ${event.type}, ${body}, now())`,
        );
        const args: DeliveryArgs = { deliveryId, schedule };
        jobs.push({
          orgId: event.org_id,
          jobType: WEBHOOK_DELIVERY_JOB,
          jobKey: `webhook-delivery-${deliveryId}`,
          args: [args],
          description: `deliver ${event.type} (event ${event.id}) to webhook endpoint ${endpoint.id}`,
        });
      }
    }
    await enqueueJobs(tx, jobs);
    await query(
      tx,
      sql`update events set dispatched_at = now() where (org_id, id) in (select *
        from unnest(${events.map((e) => e.org_id)}::uuid[], ${events.map((e) => e.id)}::bigint[]))`,
    );
    return events.length;
  });
}

// Sends a finished delivery again as a new delivery with the same body (a new webhook-id: receivers that
// deduplicate by id would otherwise drop it).
export async function redeliver(
  em: EntityManager,
  orgId: string,
  endpointId: string,
  deliveryId: string,
  schedule: number[],
): Promise<string | null> {
  return em.transactional(async (tx) => {
    const [previous] = await query(
      tx,
      sql<{ event_id: string; event_type: string; body: string }>`select event_id, event_type, body from webhook_deliveries
        where id = ${deliveryId} and endpoint_id = ${endpointId} and org_id = ${orgId} and status <> 'pending'`,
    );
    if (!previous) return null;
    const id = newId();
    await query(
      tx,
      sql`insert into webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, body, created_at)
          values (${id}, ${orgId}, ${endpointId}, ${previous.event_id}, ${previous.event_type}, ${previous.body}, now())`,
    );
    const args: DeliveryArgs = { deliveryId: id, schedule };
    await enqueueJobs(tx, [
      {
        orgId,
        jobType: WEBHOOK_DELIVERY_JOB,
        jobKey: `webhook-delivery-${id}`,
        args: [args],
        description: `redeliver ${previous.event_type} (delivery ${deliveryId}) to webhook endpoint ${endpointId}`,
      },
    ]);
    return id;
  });
}
