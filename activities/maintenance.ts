import type { MikroORM } from '@mikro-orm/postgresql';
import { sweepOnce, type Sweep } from '../domain/maintenance/sweep.ts';

export function maintenanceActivities({ orm }: { orm: MikroORM }) {
  return {
    async sweepExpired(): Promise<Sweep> {
      return sweepOnce(orm.em.fork());
    },
  };
}
