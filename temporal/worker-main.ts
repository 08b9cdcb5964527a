import { databaseDeadlines, loadConfigOrExit } from '../infra/config.ts';
import { serveMetrics } from '../infra/metrics.ts';
import { installTracing } from '../infra/tracing.ts';
import { backfillLagging } from '../domain/embeddings/backfill.ts';
import { scheduleFolds } from '../domain/search/fold.ts';
import { createEmbedder } from '../infra/embeddings/index.ts';
import { createLlm } from '../infra/llm/router.ts';
import { createLogger } from '../infra/logger.ts';
import { createMailer } from '../infra/mailer.ts';
import { openOrm } from '../infra/orm.ts';
import { onShutdown } from '../infra/shutdown.ts';
import { connectClient } from './client.ts';
import { OutboxRelay } from './outbox-relay.ts';
import { ensureSchedules } from './schedules.ts';
import { installTemporalRuntime } from './runtime.ts';
import { activityDeps, createWorker } from './worker.ts';
import { watchWorkerState } from './worker-metrics.ts';

const tracing = installTracing('memsvc-worker');
const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, 'worker');
installTemporalRuntime(logger, config.LOG_LEVEL);
const orm = await openOrm({
  databaseUrl: config.DATABASE_URL,
  poolMax: config.DATABASE_POOL_MAX,
  deadlines: databaseDeadlines(config, 'worker'),
});
const client = connectClient(config.temporal, config.TEMPORAL_NAMESPACE, config.codecKeys);
const mailer = createMailer(config.SMTP_URL, config.MAIL_FROM, logger);

const embedder = await createEmbedder(config, logger, 'documents');

const { worker, connection } = await createWorker({
  endpoint: config.temporal,
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  codecKeys: config.codecKeys,
  deps: activityDeps(config, { orm, mailer, llm: createLlm(config, logger), embedder }),
  tracing,
  ...(config.WORKFLOW_BUNDLE_PATH ? { workflowBundle: { codePath: config.WORKFLOW_BUNDLE_PATH } } : {}),
});
await watchWorkerState(orm, embedder?.model ?? null);
const metricsServer = await serveMetrics(config.WORKER_METRICS_PORT, config.HOST, config.METRICS_TOKEN);
const relay = new OutboxRelay({
  orm,
  client,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  databaseUrl: config.DATABASE_URL,
  logger,
  webhookRetrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
});
await relay.start();
await ensureSchedules(client, config.TEMPORAL_TASK_QUEUE);
const folding = await scheduleFolds(orm.em.fork());
if (folding > 0) logger.info({ orgs: folding }, 'folding the postings of orgs that have some staged');
if (embedder) {
  const orgs = await backfillLagging(orm.em.fork(), embedder.model);
  if (orgs > 0) logger.info({ orgs, model: embedder.model }, 'backfilling embeddings of orgs whose vectors lag');
}
logger.info(
  { taskQueue: config.TEMPORAL_TASK_QUEUE, metrics: `http://${config.HOST}:${config.WORKER_METRICS_PORT}/metrics` },
  'worker and outbox relay running',
);

// Runs until shutdown, when the worker drains (its activities finish) and everything it used is closed.
const stopped = worker.run().then(async () => {
  metricsServer.close();
  await embedder?.close();
  await tracing.shutdown();
  await connection.close();
  await client.connection.close();
  await orm.close();
});
// The process exits only once the worker has stopped: exiting while an activity runs the model would abort it.
onShutdown(logger, async () => {
  await relay.stop();
  // The SDK also reacts to SIGINT/SIGTERM on its own; only ask when it has not started draining yet.
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await stopped;
});
await stopped;
