import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { SweepCounts } from '../domain/maintenance/sweep.ts';
import { TRANSACTION } from './options.ts';

const { sweepExpired } = proxyActivities<Activities>(TRANSACTION);

// Run by the hourly `maintenance-<task queue>` schedule: batch after batch until no table fills one.
export async function maintenanceWorkflow(): Promise<SweepCounts> {
  const total: SweepCounts = {};
  for (;;) {
    const sweep = await sweepExpired();
    for (const [table, n] of Object.entries(sweep.counts)) total[table] = (total[table] ?? 0) + n;
    if (!sweep.more) return total;
  }
}
