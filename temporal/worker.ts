import { NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { createActivities, type ActivityDeps } from '../activities/index.ts';
import { dataConverter } from './data-converter.ts';
import type { CodecKey } from './payload-codec.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface WorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  codecKeys: CodecKey[];
  deps: ActivityDeps;
  // A prebuilt bundle (tests build one per run); without it the worker bundles workflows/ itself.
  workflowBundle?: WorkflowBundleOption;
}

export async function createWorker(options: WorkerOptions): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    dataConverter: dataConverter(options.codecKeys),
    activities: createActivities(options.deps),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
  });
  return { worker, connection };
}
