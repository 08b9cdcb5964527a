import { ScheduleAlreadyRunning, type Client } from '@temporalio/client';

export const maintenanceScheduleId = (taskQueue: string): string => `maintenance-${taskQueue}`;

// The hourly sweep of expired working state (domain/maintenance/sweep.ts), created once per task queue by
// the worker at start; a schedule that exists already is left as an operator may have tuned it.
export async function ensureMaintenanceSchedule(client: Client, taskQueue: string): Promise<void> {
  try {
    await client.schedule.create({
      scheduleId: maintenanceScheduleId(taskQueue),
      spec: { intervals: [{ every: '1 hour' }] },
      action: { type: 'startWorkflow', workflowType: 'maintenanceWorkflow', taskQueue, workflowId: `maintenance-${taskQueue}`, args: [] },
      policies: { overlap: 'SKIP' },
      memo: { description: 'delete expired idempotency keys, sealed keys, OAuth states, write-limit windows, and outbox rows and events dispatched over a week ago' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
