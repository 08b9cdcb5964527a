import type { MikroORM } from '@mikro-orm/postgresql';
import { WEBHOOK_EVENTS } from '../../domain/webhooks/events.ts';
import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import type { Activities } from '../../activities/index.ts';
import { createApp, listen } from '../../api/app.ts';
import { externalClients } from '../../api/deps.ts';
import { query, sql } from '../../domain/sql.ts';
import { ensureLocalAccount } from '../../domain/accounts/local.ts';
import { databaseDeadlines, loadConfig, type Config } from '../../infra/config.ts';
import { createEmbedder } from '../../infra/embeddings/index.ts';
import { createLlm } from '../../infra/llm/router.ts';
import { createLogger } from '../../infra/logger.ts';
import { createMailer } from '../../infra/mailer.ts';
import { openOrm } from '../../infra/orm.ts';
import { connectClient } from '../../temporal/client.ts';
import { OutboxRelay, type RelayOptions } from '../../temporal/outbox-relay.ts';
import { installTemporalRuntime } from '../../temporal/runtime.ts';
import { installTracing } from '../../infra/tracing.ts';
import { activityDeps, createWorker } from '../../temporal/worker.ts';
import { ApiClient } from './api-client.ts';
import { createTestDatabase } from './database.ts';

export interface Stack {
  config: Config;
  orm: MikroORM;
  temporal: Client;
  api: ApiClient;
  baseUrl: string;
  worker: WorkerHandle | null;
  relay: OutboxRelay | null;
  startWorker(replaceActivities?: Partial<Activities>): Promise<WorkerHandle>;
  close(): Promise<void>;
}

export interface WorkerHandle {
  worker: Worker;
  stop(): Promise<void>;
}

export interface StackOptions {
  env?: Record<string, string>;
  // Defaults to a fresh database for this stack; pass one to let several stacks share it.
  databaseUrl?: string;
  // Listen on this port instead of an ephemeral one (for tests that must know the address beforehand).
  port?: number;
  worker?: boolean;
  relay?: boolean;
  // The bundled embedding model in the API and the worker (from the cache scripts/test.sh fills).
  embeddings?: boolean;
}

const requiredEnv = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the suite with scripts/test.sh`);
  return value;
};

// The real service in this test process: API on an ephemeral port, a worker on a task queue of its own
// (so parallel test files never run each other's workflows), and the outbox relay, all over the run's
// PostgreSQL database and Temporal dev server.
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const config = loadConfig({
    DATABASE_URL: options.databaseUrl ?? (await createTestDatabase()),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_POOL_MAX: '5',
    // Embedding every memory every test saves would double the suite's CPU time on two cores: the curator
    // runs, with nothing to embed, unless a test asks for the real model (`embeddings: true`) or sets
    // EMBEDDING_PROVIDER itself.
    // Every test signs up from 127.0.0.1; public-throttle.test.ts turns the limit back on.
    SIGNUPS_PER_ADDRESS_PER_HOUR: '0',
    // The keys scripts/test.sh exports: worker processes that tests spawn read the same history.
    BYOK_ESCROW_KEY: requiredEnv('BYOK_ESCROW_KEY'),
    TEMPORAL_CODEC_KEYS: requiredEnv('TEMPORAL_CODEC_KEYS'),
    METRICS_TOKEN: requiredEnv('METRICS_TOKEN'),
    ...(options.embeddings
      ? { EMBEDDING_PROVIDER: 'local', EMBEDDING_MODEL_DIR: requiredEnv('EMBEDDING_MODEL_DIR') }
      : { EMBEDDING_PROVIDER: 'none' }),
    ...options.env,
  });
  const logger = createLogger(config.LOG_LEVEL, 'test');
  installTemporalRuntime(logger, config.LOG_LEVEL);
  const orm = await openOrm({
    databaseUrl: config.DATABASE_URL,
    poolMax: config.DATABASE_POOL_MAX,
    deadlines: databaseDeadlines(config, 'api'),
  });
  const temporal = connectClient(config.temporal, config.TEMPORAL_NAMESPACE, config.codecKeys);
  const mailer = createMailer(config.SMTP_URL, config.MAIL_FROM, logger);
  const llm = createLlm(config, logger);
  // One model for the API and the worker of the test stack; its sessions embed the saved memories side by side.
  const embedder = await createEmbedder(config, logger, 'documents');
  const localCaller = config.SERVICE_MODE === 'local' ? await ensureLocalAccount(orm.em.fork()) : null;

  const startWorker = async (replaceActivities?: Partial<Activities>): Promise<WorkerHandle> => {
    const { worker, connection } = await createWorker({
      endpoint: config.temporal,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      codecKeys: config.codecKeys,
      deps: activityDeps(config, { orm, mailer, llm, embedder }),
      tracing: installTracing('memsvc-test'),
      workflowBundle: { codePath: inject('workflowBundlePath') },
      replaceActivities,
    });
    const running = worker.run();
    let stopped: Promise<void> | undefined;
    return {
      worker,
      stop() {
        stopped ??= (async () => {
          if (worker.getState() === 'RUNNING') worker.shutdown();
          await running;
          await connection.close();
        })();
        return stopped;
      },
    };
  };

  const workerHandle = options.worker === false ? null : await startWorker();
  const relay = options.relay === false ? null : newRelay({ orm, temporal, config }, { logger });
  await relay?.start();

  const app = createApp({
    config,
    orm,
    temporal,
    logger,
    localCaller,
    llm,
    embedder,
    clients: externalClients(config),
    validateResponses: true,
  });
  const server: Server = await listen(app, options.port ?? 0, '127.0.0.1');
  const address = server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const stack: Stack = {
    config,
    orm,
    temporal,
    api: new ApiClient(baseUrl),
    baseUrl,
    worker: workerHandle,
    relay,
    startWorker,
    async close() {
      // Open connections (a client's keep-alive or event stream) would hold close() up: they are cut.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await relay?.stop();
      await stack.worker?.stop();
      await temporal.connection.close();
      await orm.close();
    },
  };
  return stack;
}

let counter = 0;
export const uniqueEmail = (label = 'user'): string => `${label}-${Date.now()}-${process.pid}-${++counter}@example.test`;

export interface SignedUp {
  user: { id: string; email: string; name: string };
  org: { id: string; slug: string; plan: string; role: string };
  token: string;
  tokenId: string;
  cookie: string;
  password: string;
}

export async function signUp(
  api: ApiClient,
  overrides: Partial<{ email: string; password: string; name: string; org_name: string }> = {},
): Promise<SignedUp> {
  const body = {
    email: uniqueEmail(),
    password: 'correct horse battery',
    name: 'Ada Lovelace',
    org_name: 'Analytical Engines',
    ...overrides,
  };
  const res = await api.post('/api/auth/signup', { body });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  return {
    user: res.body.user,
    org: res.body.org,
    token: res.body.api_token.raw,
    tokenId: res.body.api_token.id,
    cookie: res.cookie!,
    password: body.password,
  };
}

// Memory events are written only for orgs with an endpoint subscribed to them (domain/webhooks/event-log.ts);
// tests that read the events table subscribe one directly (no relay runs there to deliver to it), to every event.
export async function subscribeToMemoryEvents(stack: Stack, orgId: string): Promise<void> {
  await query(
    stack.orm.em.fork(),
    sql`insert into webhook_endpoints (id, org_id, url, events, secret, created_at, updated_at)
        values (gen_random_uuid(), ${orgId}, 'https://hooks.example.test/memory', ${[...WEBHOOK_EVENTS]}::text[], 'whsec_test',
          now(), now())`,
  );
}

// For files whose stack runs without the relay: dispatches the outbox while `fn` runs (for example until a
// background erasure has finished).
export async function withRelay<T>(stack: Stack, fn: () => Promise<T>): Promise<T> {
  const relay = newRelay(stack);
  await relay.start();
  try {
    return await fn();
  } finally {
    await relay.stop();
  }
}

// An outbox relay over a stack's database, Temporal and task queue (polling every 200 ms unless told).
export function newRelay(stack: Pick<Stack, 'orm' | 'temporal' | 'config'>, options: Partial<RelayOptions> = {}): OutboxRelay {
  return new OutboxRelay({
    orm: stack.orm,
    client: stack.temporal,
    taskQueue: stack.config.TEMPORAL_TASK_QUEUE,
    databaseUrl: stack.config.DATABASE_URL,
    logger: createLogger('silent', 'test'),
    pollIntervalMs: 200,
    webhookRetrySchedule: stack.config.WEBHOOK_RETRY_SCHEDULE,
    ...options,
  });
}

export async function lockWaiters(stack: Stack): Promise<number> {
  const rows = await query(
    stack.orm.em.fork(),
    sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
  );
  return rows[0]!.n;
}

export async function eventually<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
