import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { DeliveryArgs } from '../domain/webhooks/fanout.ts';

// An attempt records its own outcome; only infrastructure failures (database down) are retried by Temporal, until
// they pass (at most a minute apart), so a delivery is never left pending by an outage. One attempt is an HTTP call
// of at most 10 s (DELIVERY_TIMEOUT_MS) and two short statements: an attempt still running after 30 s was lost
// with its worker, and goes to another worker then.
const { attemptWebhookDelivery } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

// Waits the schedule's delay before each attempt (durable timers: a worker or server restart resumes the
// wait), and stops at the first success, at a 410, or when the schedule runs out.
export async function webhookDeliveryWorkflow(args: DeliveryArgs): Promise<string> {
  for (let i = 0; i < args.schedule.length; i++) {
    const delay = args.schedule[i]!;
    if (delay > 0) await sleep(delay * 1000);
    const next = await attemptWebhookDelivery({ deliveryId: args.deliveryId, attempt: i + 1, final: i === args.schedule.length - 1 });
    if (next !== 'retry') return next;
  }
  return 'stop';
}
