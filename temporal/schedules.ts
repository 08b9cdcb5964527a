import { ScheduleAlreadyRunning, type Client } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { maintenanceWorkflow, vectorIndexesWorkflow } from '../workflows/index.ts';

export const maintenanceScheduleId = (taskQueue: string): string => `maintenance-${taskQueue}`;
export const vectorIndexScheduleId = (taskQueue: string): string => `vector-indexes-${taskQueue}`;

interface ScheduledWorkflow {
  id: (taskQueue: string) => string;
  workflow: Workflow;
  every: string;
  description: string;
}

const SCHEDULES: ScheduledWorkflow[] = [
  {
    id: maintenanceScheduleId,
    workflow: maintenanceWorkflow,
    every: '1 hour',
    description:
      'delete expired idempotency keys, sealed keys, OAuth states, write-limit windows, and outbox rows and events ' +
      'dispatched over a week ago',
  },
  {
    // Often enough that an org which grows past the threshold gets its index within minutes; a run with nothing
    // to do reads the counters once.
    id: vectorIndexScheduleId,
    workflow: vectorIndexesWorkflow,
    every: '10 minutes',
    description: 'give orgs with many vectors an HNSW index of their own, and drop the indexes no longer wanted',
  },
];

// The worker's recurring jobs, created once per task queue by the worker at start; a schedule that exists already
// is left as an operator may have tuned it. A run still going when the next is due makes that one skip.
export async function ensureSchedules(client: Client, taskQueue: string): Promise<void> {
  for (const s of SCHEDULES) {
    try {
      await client.schedule.create({
        scheduleId: s.id(taskQueue),
        spec: { intervals: [{ every: s.every }] },
        action: { type: 'startWorkflow', workflowType: s.workflow, taskQueue, workflowId: s.id(taskQueue), args: [] },
        policies: { overlap: 'SKIP' },
        memo: { description: s.description },
      });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    }
  }
}
