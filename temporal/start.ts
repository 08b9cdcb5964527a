import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { UpdateDefinition, Workflow } from '@temporalio/common';
import type { JobRequest } from '../domain/outbox/enqueue.ts';
import { JOB_WORKFLOWS } from './jobs.ts';
import { asAppError } from './outcome.ts';
import { orgAttributes } from './search-attributes.ts';

export interface StartRequest {
  workflowId: string;
  orgId: string | null;
  // Shown in the Web UI's memo panel: what this execution is for.
  description: string;
  args: unknown[];
}

// The one place that decides how every workflow is started: meaningful id, tenant search attribute,
// memo, and no second execution for an id that already ran.
function startOptions(taskQueue: string, request: StartRequest) {
  return {
    taskQueue,
    workflowId: request.workflowId,
    args: request.args,
    typedSearchAttributes: orgAttributes(request.orgId),
    memo: { description: request.description, ...(request.orgId ? { orgId: request.orgId } : {}) },
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
  };
}

// Starts the workflow once. Returns false when an execution with this id already exists or existed.
export async function startOnce(client: Client, taskQueue: string, workflowType: string, request: StartRequest): Promise<boolean> {
  try {
    await client.workflow.start(workflowType, { ...startOptions(taskQueue, request), workflowIdConflictPolicy: 'FAIL' });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

// Delivers a signal to a long-lived workflow (an org's actor), starting it first if it is not running. A
// closed run of the same id is replaced by a new one, which the signal then reaches.
export async function signalWithStart(client: Client, taskQueue: string, workflowType: string, signal: string, signalArgs: unknown[], request: StartRequest): Promise<void> {
  await client.workflow.signalWithStart(workflowType, { ...startOptions(taskQueue, request), workflowIdReusePolicy: 'ALLOW_DUPLICATE', signal, signalArgs });
}

// Starts the workflow and waits for one update's answer: the request gets the workflow's first result
// while the rest of the workflow goes on.
export async function startAndAwait<Ret>(
  client: Client,
  taskQueue: string,
  workflow: Workflow,
  update: UpdateDefinition<Ret, []>,
  request: StartRequest,
): Promise<Ret> {
  const startWorkflowOperation = new WithStartWorkflowOperation(workflow, {
    ...startOptions(taskQueue, request),
    args: request.args as Parameters<typeof workflow>,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  return client.workflow.executeUpdateWithStart(update, { startWorkflowOperation });
}

// Runs the workflow and waits for its result. Concurrent requests for the same id join one execution; once
// it has ended, the id may run again (for repeatable operations such as a consolidation scan).
export async function runShared<Ret>(client: Client, taskQueue: string, workflowType: string, request: StartRequest): Promise<Ret> {
  const handle = await client.workflow.start(workflowType, { ...startOptions(taskQueue, request), workflowIdReusePolicy: 'ALLOW_DUPLICATE', workflowIdConflictPolicy: 'USE_EXISTING' });
  return (await handle.result().catch(rethrowAsAppError)) as Ret;
}

// Waits for the result of an outbox job: starts it now rather than waiting for the relay (both start the
// same id at most once, whichever comes first), then follows that execution.
export async function dispatchAndAwait<Ret>(client: Client, taskQueue: string, job: JobRequest): Promise<Ret> {
  const workflowType = JOB_WORKFLOWS[job.jobType];
  if (!workflowType) throw new Error(`no workflow for job type ${job.jobType}`);
  await startOnce(client, taskQueue, workflowType, { workflowId: job.jobKey, orgId: job.orgId, description: job.description, args: job.args });
  return (await client.workflow.getHandle(job.jobKey).result().catch(rethrowAsAppError)) as Ret;
}

// A failed execution answers its waiting caller with the domain error it failed with (temporal/outcome.ts).
const rethrowAsAppError = (err: unknown): never => {
  throw asAppError(err);
};
