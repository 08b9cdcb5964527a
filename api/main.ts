import { ensureLocalAccount } from '../domain/accounts/local.ts';
import { databaseDeadlines, loadConfigOrExit } from '../infra/config.ts';
import { blockCache } from '../domain/search/lexical.ts';
import { watchLexicalCache, watchPool } from '../infra/metrics.ts';
import { installTracing } from '../infra/tracing.ts';
import { OrgActivity } from '../domain/org-activity.ts';
import { publishOrgActivity } from '../domain/org-activity-board.ts';
import { createEmbedder } from '../infra/embeddings/index.ts';
import { createLlm } from '../infra/llm/router.ts';
import { createLogger } from '../infra/logger.ts';
import { openOrm } from '../infra/orm.ts';
import { onShutdown } from '../infra/shutdown.ts';
import { connectClient } from '../temporal/client.ts';
import { createApp, listen } from './app.ts';
import { externalClients } from './deps.ts';

const tracing = installTracing('memsvc-api');
const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, 'api');
blockCache.resize(config.LEXICAL_CACHE_MB * 2 ** 20);
watchLexicalCache(blockCache);
const orm = await openOrm({
  databaseUrl: config.DATABASE_URL,
  poolMax: config.DATABASE_POOL_MAX,
  deadlines: databaseDeadlines(config, 'api'),
});
watchPool(await orm.em.getConnection().getNativeClient());
const temporal = connectClient(config.temporal, config.TEMPORAL_NAMESPACE, config.codecKeys);
const localCaller = config.SERVICE_MODE === 'local' ? await ensureLocalAccount(orm.em.fork()) : null;

const embedder = await createEmbedder(config, logger, 'queries');

// The orgs this process serves, written for the worker, whose exports leave room for them.
const activity = new OrgActivity();
const publishing = publishOrgActivity(orm, activity, (err) => logger.warn({ err }, 'could not write which orgs are busy'));
const server = await listen(
  createApp(
    { config, orm, temporal, logger, localCaller, llm: createLlm(config, logger), embedder, clients: externalClients(config) },
    activity,
  ),
  config.PORT,
  config.HOST,
);
logger.info({ url: config.publicBaseUrl, mode: config.SERVICE_MODE, docs: `${config.publicBaseUrl}/api/docs` }, 'API listening');

onShutdown(logger, async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await publishing.stop();
  await embedder?.close();
  await temporal.connection.close();
  await orm.close();
  await tracing.shutdown();
});
