import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../audit/record.ts';
import { PLANS, type Plan } from '../accounts/enums.ts';
import { findOrg, orgIdOfCustomer, updateOrgBilling } from '../accounts/rows.ts';
import { isUuid } from '../ids.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { query, queryOne, sql } from '../sql.ts';

export const BILLING_EVENT_JOB = 'billingEvent';
const HANDLED_EVENTS = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.payment_failed',
  'charge.refunded',
] as const;

export interface ProcessorEvent {
  id: string;
  type: string;
  data: { object: Record<string, unknown> };
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const metadataOf = (o: Record<string, unknown>): Record<string, unknown> =>
  o.metadata && typeof o.metadata === 'object' ? (o.metadata as Record<string, unknown>) : {};

// Which org an event is about: the checkout's `service_org_id`, else the org holding its customer.
async function orgOfEvent(em: EntityManager, event: ProcessorEvent): Promise<string | null> {
  const object = event.data.object;
  const fromMetadata = str(metadataOf(object).service_org_id);
  if (fromMetadata) {
    const org = isUuid(fromMetadata) ? await findOrg(em, fromMetadata) : undefined;
    if (org) return org.id;
  }
  const customer = str(object.customer);
  if (!customer) return null;
  return (await orgIdOfCustomer(em, customer)) ?? null;
}

export type Receipt = { recorded: false } | { recorded: true; duplicate: boolean };

// Records a verified event once per event id, with its reconciliation job, in one transaction.
export async function receiveEvent(em: EntityManager, event: ProcessorEvent): Promise<Receipt> {
  if (!(HANDLED_EVENTS as readonly string[]).includes(event.type)) return { recorded: false };
  return em.transactional(async (tx) => {
    const orgId = await orgOfEvent(tx, event);
    const inserted = await query(
      tx,
      sql`insert into billing_events (id, type, org_id, payload, received_at)
        values (${event.id}, ${event.type}, ${orgId}, ${JSON.stringify(event)}::jsonb, now())
          on conflict (id) do nothing returning id`,
    );
    if (inserted.length === 0) return { recorded: true, duplicate: true };
    await enqueueJobs(tx, [
      {
        orgId,
        jobType: BILLING_EVENT_JOB,
        jobKey: `billing-event-${event.id}`,
        args: [{ eventId: event.id }],
        description: `reconcile ${event.type} (${event.id})`,
      },
    ]);
    return { recorded: true, duplicate: false };
  });
}

const isPaid = (plan: unknown): plan is Plan => typeof plan === 'string' && plan !== 'free' && (PLANS as readonly string[]).includes(plan);

// Applies one recorded event to its org; idempotent (a processed event is skipped).
export async function reconcileEvent(em: EntityManager, eventId: string): Promise<string> {
  return em.transactional(async (tx) => {
    const row = await queryOne(
      tx,
      sql<{
        payload: ProcessorEvent;
        org_id: string | null;
        processed_at: string | null;
      }>`select payload, org_id, processed_at from billing_events where id = ${eventId} for update`,
    );
    if (!row) return 'unknown event';
    if (row.processed_at) return 'already processed';
    const event = row.payload;
    const object = event.data.object;
    const orgId = row.org_id ?? (await orgOfEvent(tx, event));
    let outcome = 'no org';
    if (orgId) {
      const meta = metadataOf(object);
      switch (event.type) {
        case 'checkout.session.completed': {
          const plan = isPaid(meta.plan) ? meta.plan : 'team';
          await updateOrgBilling(tx, orgId, {
            plan,
            stripeCustomerId: str(object.customer) ?? undefined,
            stripeSubscriptionId: str(object.subscription) ?? undefined,
            billingStatus: 'active',
          });
          outcome = `plan ${plan}`;
          break;
        }
        case 'customer.subscription.created':
        case 'customer.subscription.updated': {
          const plan = isPaid(meta.plan) ? meta.plan : null;
          await updateOrgBilling(tx, orgId, {
            stripeSubscriptionId: str(object.id),
            billingStatus: str(object.status) ?? 'active',
            plan: plan ?? undefined,
          });
          outcome = `subscription ${str(object.status) ?? 'active'}`;
          break;
        }
        case 'customer.subscription.deleted':
          await updateOrgBilling(tx, orgId, { plan: 'free', billingStatus: 'canceled', stripeSubscriptionId: null });
          outcome = 'plan free';
          break;
        case 'invoice.payment_failed':
          await updateOrgBilling(tx, orgId, { billingStatus: 'past_due' });
          outcome = 'past due';
          break;
        case 'charge.refunded':
          outcome = 'refund recorded';
          break;
      }
      await recordAudit(tx, {
        orgId,
        action: `billing.${event.type}`,
        targetId: eventId,
        actor: { userId: null, credentialId: null },
        details: { outcome },
      });
    }
    await query(tx, sql`update billing_events set processed_at = now(), outcome = ${outcome}, org_id = ${orgId} where id = ${eventId}`);
    return outcome;
  });
}
