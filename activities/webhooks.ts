import type { MikroORM } from '@mikro-orm/postgresql';
import { deliveryToAttempt, recordAttempt, type Next } from '../domain/webhooks/deliveries.ts';
import { signWebhook } from '../domain/webhooks/signature.ts';
import { webhookAttempts, webhookGaveUp, webhookLag } from '../infra/metrics.ts';
import type { WebhookSender } from '../infra/webhook-sender.ts';

export interface WebhookActivityDeps {
  orm: MikroORM;
  sendWebhook: WebhookSender;
  // What endpoints' signing secrets are sealed under (domain/webhooks/secrets.ts).
  escrowKey: Buffer;
}

export function webhookActivities({ orm, sendWebhook, escrowKey }: WebhookActivityDeps) {
  return {
    // One attempt. webhook-id stays the delivery id across retries; the timestamp and signature are fresh.
    async attemptWebhookDelivery(input: { deliveryId: string; attempt: number; final: boolean }): Promise<Next> {
      const em = orm.em.fork();
      const delivery = await deliveryToAttempt(em, input.deliveryId, escrowKey);
      if (!delivery) return 'stop';
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(delivery.secret, delivery.id, timestamp, delivery.body),
      };
      const result = await sendWebhook(delivery.url, headers, delivery.body);
      const next = await recordAttempt(em, delivery, input.attempt, result, input.final);
      webhookAttempts.inc({ outcome: next === 'done' ? 'delivered' : 'failed' });
      if (next === 'done') webhookLag.observe((Date.now() - delivery.createdAt.getTime()) / 1000);
      if (next === 'stop') webhookGaveUp.inc();
      return next;
    },
  };
}
