import type { MikroORM } from '@mikro-orm/postgresql';
import { reconcileEvent } from '../domain/billing/events.ts';

export function billingActivities({ orm }: { orm: MikroORM }) {
  return {
    async reconcileBillingEvent(input: { eventId: string }): Promise<string> {
      return reconcileEvent(orm.em.fork(), input.eventId);
    },
  };
}
