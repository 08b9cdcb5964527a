import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { TRANSACTION } from './options.ts';

const { reconcileBillingEvent } = proxyActivities<Activities>(TRANSACTION);

// `billing-event-<processor event id>`: at most one reconciliation per event, whatever the processor resends.
export async function billingEventWorkflow(args: { eventId: string }): Promise<string> {
  return reconcileBillingEvent(args);
}
