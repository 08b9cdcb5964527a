import type { MikroORM } from '@mikro-orm/postgresql';
import { sweepOnce, type Sweep } from '../domain/maintenance/sweep.ts';
import { sealPlainSecrets } from '../domain/webhooks/secrets.ts';

export function maintenanceActivities({ orm, escrowKey }: { orm: MikroORM; escrowKey: Buffer }) {
  return {
    // Also seals the webhook secrets written before they were sealed, a batch a run.
    async sweepExpired(): Promise<Sweep> {
      await sealPlainSecrets(orm.em.fork(), escrowKey);
      return sweepOnce(orm.em.fork());
    },
  };
}
