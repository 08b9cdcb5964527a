import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createActivities, type Activities, type ActivityDeps } from '../activities/index.ts';
import type { Config, TemporalEndpoint } from '../infra/config.ts';
import { createWebhookSender } from '../infra/webhook-sender.ts';
import type { Tracing } from '../infra/tracing.ts';
import { connectionOptions } from './client.ts';
import { OrgActivityInbound } from './org-activity-interceptor.ts';
import { OrgActivity } from '../domain/org-activity.ts';
import { OrgActivityBoard } from '../domain/org-activity-board.ts';
import { dataConverter } from './data-converter.ts';
import type { CodecKey } from './payload-codec.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
// OpenTelemetry's workflow interceptors, bundled with the workflows: each workflow and each activity it
// schedules continues the trace its start or signal carried in its headers.
export const WORKFLOW_INTERCEPTORS_PATH = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);

export interface WorkerOptions {
  endpoint: TemporalEndpoint;
  namespace: string;
  taskQueue: string;
  codecKeys: CodecKey[];
  deps: ActivityDeps;
  tracing: Tracing;
  // A prebuilt bundle (tests build one per run; WORKFLOW_BUNDLE_PATH), made with WORKFLOW_INTERCEPTORS_PATH;
  // without it the worker bundles workflows/ itself.
  workflowBundle?: WorkflowBundleOption;
  // Activities put in place of the real ones: fault tests make one fail for good this way.
  replaceActivities?: Partial<Activities>;
}

// The activities' dependencies: the process's connections and clients, the rest from the configuration.
export function activityDeps(config: Config, parts: Pick<ActivityDeps, 'orm' | 'mailer' | 'llm' | 'embedder'>): ActivityDeps {
  return {
    ...parts,
    publicBaseUrl: config.publicBaseUrl,
    sendWebhook: createWebhookSender(config.WEBHOOK_ALLOW_PRIVATE_TARGETS),
    escrowKey: config.byokEscrowKey,
    embeddingsDisabled: config.EMBEDDING_PROVIDER === 'none',
    vectorIndexOrgMin: config.VECTOR_INDEX_ORG_MIN,
    extractionTokensPerMonth: config.EXTRACTION_TOKENS_PER_MONTH,
    orgActivity: new OrgActivity(),
    orgBoard: new OrgActivityBoard(parts.orm),
    busyShare: config.ORG_BUSY_SHARE,
  };
}

export async function createWorker(options: WorkerOptions): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect(connectionOptions(options.endpoint));
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    dataConverter: dataConverter(options.codecKeys),
    activities: { ...createActivities(options.deps), ...options.replaceActivities },
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
        () => ({ inbound: new OrgActivityInbound(options.deps.orgActivity) }),
      ],
      // A prebuilt bundle carries them already (temporal/workflow-bundle.ts).
      ...(options.workflowBundle ? {} : { workflowModules: [WORKFLOW_INTERCEPTORS_PATH] }),
    },
    // Workflow code cannot export spans itself: it hands them to this sink, outside the sandbox.
    sinks: { exporter: makeWorkflowExporter(options.tracing.processor, options.tracing.resource) },
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
  });
  return { worker, connection };
}
