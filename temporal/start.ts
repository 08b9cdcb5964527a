import {
  WorkflowExecutionAlreadyStartedError,
  type Client,
  type WorkflowSignalWithStartOptions,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { SignalDefinition, WithWorkflowArgs, Workflow, WorkflowResultType } from '@temporalio/common';
import { AppError } from '../domain/errors.ts';
import { asAppError, isTemporalDown } from './outcome.ts';
import { orgAttributes } from './search-attributes.ts';

// The one way the service runs workflows: a workflow function (never a type name as a string), started once by
// its id, signalled with start, or run and awaited with a deadline.

export interface StartRequest<W extends Workflow> {
  workflowId: string;
  orgId: string | null;
  // Shown in the Web UI's memo panel: what this execution is for.
  description: string;
  args: Parameters<W>;
}

type IdPolicies = Pick<WorkflowStartOptions, 'workflowIdReusePolicy' | 'workflowIdConflictPolicy'>;

// Every start carries its meaningful id, the tenant's search attribute and a memo. (The SDK's conditional type
// for `args` cannot be checked against a generic W; StartRequest<W> types them for each caller.)
function startOptions<W extends Workflow>(taskQueue: string, request: StartRequest<W>, policies: IdPolicies): WorkflowStartOptions<W> {
  return {
    taskQueue,
    workflowId: request.workflowId,
    args: request.args,
    typedSearchAttributes: orgAttributes(request.orgId),
    memo: { description: request.description, ...(request.orgId ? { orgId: request.orgId } : {}) },
    ...policies,
  } as unknown as WorkflowStartOptions<W>;
}

// Starts the workflow once. Returns false when an execution with this id already exists or existed.
export async function startOnce<W extends Workflow>(
  client: Client,
  taskQueue: string,
  workflow: W,
  request: StartRequest<W>,
): Promise<boolean> {
  try {
    await client.workflow.start(
      workflow,
      startOptions(taskQueue, request, { workflowIdReusePolicy: 'REJECT_DUPLICATE', workflowIdConflictPolicy: 'FAIL' }),
    );
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

// Delivers a signal to a long-lived workflow (an org's actor), starting it first if it is not running. A
// closed run of the same id is replaced by a new one, which the signal then reaches.
export async function signalWithStart<W extends Workflow, A extends unknown[]>(
  client: Client,
  taskQueue: string,
  workflow: W,
  signal: SignalDefinition<A>,
  signalArgs: A,
  request: StartRequest<W>,
): Promise<void> {
  const options = { ...startOptions(taskQueue, request, { workflowIdReusePolicy: 'ALLOW_DUPLICATE' }), signal, signalArgs };
  await client.workflow.signalWithStart(workflow, options as WithWorkflowArgs<W, WorkflowSignalWithStartOptions<A>>);
}

export interface AwaitOptions {
  // How long the request waits, start included; the work itself goes on past it.
  deadlineMs: number;
  // Once a run of the id has ended, the id may run again (a repeatable scan); otherwise a later call reads the
  // result of the one run (an outbox job, which the relay may have started first).
  again: boolean;
}

// How soon a caller should ask again after a wait ran out or Temporal could not be reached.
const RETRY_AFTER_SECONDS = 5;
// How long one start or signal may take before Temporal counts as unreachable, whatever the caller's wait.
export const CALL_DEADLINE_MS = 5_000;

// Starts the workflow, or joins the run of its id under way, and waits for its result until the deadline.
// Concurrent callers share one run. A run that fails with a domain error answers with that error; a deadline
// that passes answers 503 `still_running` (asking again joins the same run), and an unreachable Temporal 503
// `temporal_unavailable`, both with Retry-After.
export async function runAndAwait<W extends Workflow>(
  client: Client,
  taskQueue: string,
  workflow: W,
  request: StartRequest<W>,
  options: AwaitOptions,
): Promise<WorkflowResultType<W>> {
  const waitUntil = Date.now() + options.deadlineMs;
  let started = false;
  try {
    // A start slower than a short wait is not Temporal being down: the start has its own deadline.
    const handle = await client.withDeadline(Math.max(waitUntil, Date.now() + CALL_DEADLINE_MS), () =>
      client.workflow
        .start(
          workflow,
          startOptions(taskQueue, request, {
            workflowIdReusePolicy: options.again ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        )
        .catch((err: unknown) => {
          if (err instanceof WorkflowExecutionAlreadyStartedError) return client.workflow.getHandle<W>(request.workflowId);
          throw err;
        }),
    );
    started = true;
    return (await client.withDeadline(waitUntil, () => handle.result())) as WorkflowResultType<W>;
  } catch (err) {
    if (!isTemporalDown(err)) throw asAppError(err);
    const retry = { retry_after: RETRY_AFTER_SECONDS };
    if (started)
      throw new AppError(
        'unavailable',
        'still_running',
        `the work goes on in the background; ask again to wait for its result (workflow ${request.workflowId})`,
        retry,
      );
    throw new AppError('unavailable', 'temporal_unavailable', 'the workflow service cannot be reached; try again shortly', retry);
  }
}
