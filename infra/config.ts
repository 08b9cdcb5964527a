import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { localModelSchema } from './embeddings/local-models.ts';
import { DEFAULT_MAX_INPUT_CHARS, DEFAULT_QUERY_TIMEOUT_MS } from './embeddings/openai.ts';
import { DEFAULT_BLOCK_CACHE_MB } from '../domain/search/block-cache.ts';
import { DEFAULT_QUERY_VECTOR_CACHE_ENTRIES } from '../domain/search/query-vectors.ts';

// Every setting the service reads from its environment, parsed once at start.
// Names are fixed by docs/configuration.md (operators and test harnesses set them).

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

const optionalUrl = z.url().optional();

const retrySchedule = z
  .string()
  .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, 'a comma-separated list of whole seconds')
  .transform((v) => v.split(',').map((s) => Number(s.trim())));

const provider = z.enum(['anthropic', 'openai']);

const CODEC_KEY = /^([A-Za-z0-9_-]{1,32}):([A-Za-z0-9+/=_-]+)$/;
const codecKeys = z.string().transform((value, ctx) => {
  const keys: { id: string; key: Buffer }[] = [];
  for (const entry of value.split(',').map((e) => e.trim())) {
    const match = CODEC_KEY.exec(entry);
    const key = match ? Buffer.from(match[2]!, 'base64') : null;
    if (!match || key?.length !== 32 || keys.some((k) => k.id === match[1])) {
      ctx.addIssue({
        code: 'custom',
        message: 'a comma-separated list of distinct `id:key`, each key 32 bytes in base64 (openssl rand -base64 32)',
      });
      return z.NEVER;
    }
    keys.push({ id: match[1]!, key });
  }
  return keys;
});

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.url().default('postgres://memsvc:memsvc@127.0.0.1:5433/memsvc'),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  // Searches of all orgs at once in one API process (domain/search/search-slots.ts); unset: as many as the cores,
  // at most a quarter of the pool.
  SEARCH_SLOTS: z.coerce.number().int().min(1).max(200).optional(),
  // The share of the search and batch slots' time an org whose calls queue may use while another org, not queuing, has
  // a request under way (domain/org-activity.ts), and of the worker's time its export pages take beside another org's
  // work; 1 leaves it unpaced.
  ORG_BUSY_SHARE: z.coerce.number().gt(0).max(1).default(0.1),
  // Deadlines of every pooled connection (infra/orm.ts): the longest an API statement runs, a worker's statement
  // runs (activities: bounded per attempt by their own timeouts), a transaction stays idle, and a caller waits for
  // a free connection. A request past one answers 503 with Retry-After.
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  WORKER_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(86_400_000).default(600_000),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  DATABASE_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  // Megabytes of postings blocks the API keeps decoded between lexical searches (domain/search/block-cache.ts); 0 keeps none.
  LEXICAL_CACHE_MB: z.coerce.number().int().min(0).max(65536).default(DEFAULT_BLOCK_CACHE_MB),
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('memory-service'),
  // Temporal over TLS (a self-hosted cluster behind TLS, or Temporal Cloud): any of these turns TLS on.
  TEMPORAL_TLS: bool.default(false),
  TEMPORAL_TLS_CA_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  SERVICE_MODE: z.enum(['hosted', 'local']).default('hosted'),
  PUBLIC_BASE_URL: optionalUrl,
  // Host names besides PUBLIC_BASE_URL's that requests may name (api/http/host-check.ts): `name` (any port) or
  // `name:port`. The default names no page elsewhere can make a browser send: loopback and `localhost`.
  ALLOWED_HOSTS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    )
    .default(['localhost', '127.0.0.1', '[::1]']),
  TRUSTED_PROXIES: z.coerce.number().int().min(0).max(10).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // A workflow bundle built beforehand (bundleWorkflowCode with WORKFLOW_INTERCEPTORS_PATH); without it the
  // worker bundles workflows/ when it starts, which takes seconds of CPU.
  WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
  // Prometheus: the API serves /metrics on its own port, the worker on this one (HOST as the address).
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  METRICS_TOKEN: z.string().min(16).optional(),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool.default(false),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule.default([0, 5, 300, 1800, 7200, 18000, 36000, 36000]),
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  STRIPE_API_BASE: optionalUrl,
  STRIPE_PRICE_ID: z.string().min(1).default('price_team_monthly'),
  LLM_PRIMARY_PROVIDER: provider.default('anthropic'),
  LLM_PRIMARY_BASE_URL: optionalUrl,
  LLM_PRIMARY_API_KEY: z.string().min(1).optional(),
  LLM_PRIMARY_MODEL: z.string().min(1).default('claude-sonnet-4-5'),
  LLM_ALTERNATE_PROVIDER: provider.default('openai'),
  LLM_ALTERNATE_BASE_URL: optionalUrl,
  LLM_ALTERNATE_API_KEY: z.string().min(1).optional(),
  LLM_ALTERNATE_MODEL: z.string().min(1).default('gpt-4.1-mini'),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  // An org's model tokens a month (in and out) past which extraction from conversations is skipped; 0: no cap.
  EXTRACTION_TOKENS_PER_MONTH: z.coerce.number().int().min(0).default(2_000_000),
  // Where vectors for semantic search come from (infra/embeddings/index.ts): the bundled model in this process,
  // an OpenAI-compatible `/v1/embeddings` server, or nowhere.
  EMBEDDING_PROVIDER: z.enum(['local', 'openai', 'none']).default('local'),
  EMBEDDING_MODEL_DIR: z.string().min(1).optional(),
  // `local`: which model EMBEDDING_MODEL_DIR holds (infra/embeddings/local-models.ts).
  EMBEDDING_LOCAL_MODEL: localModelSchema,
  // `local`: sessions of the model and threads in each; unset, they follow what the process embeds
  // (infra/embeddings/local.ts, localEmbedderDefaults).
  EMBEDDING_SESSIONS: z.coerce.number().int().min(1).max(16).optional(),
  EMBEDDING_THREADS: z.coerce.number().int().min(1).max(64).optional(),
  EMBEDDING_BASE_URL: optionalUrl,
  EMBEDDING_API_KEY: z.string().min(1).optional(),
  EMBEDDING_MODEL: z.string().min(1).default('text-embedding-3-small'),
  EMBEDDING_QUERY_PREFIX: z.string().min(1).optional(),
  EMBEDDING_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  EMBEDDING_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_QUERY_TIMEOUT_MS),
  EMBEDDING_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  EMBEDDING_MAX_INPUT_CHARS: z.coerce.number().int().min(100).max(1_000_000).default(DEFAULT_MAX_INPUT_CHARS),
  // Search queries whose vectors the API keeps for a query asked again, per org (domain/search/query-vectors.ts); 0: none.
  QUERY_VECTOR_CACHE_ENTRIES: z.coerce.number().int().min(0).max(1_000_000).default(DEFAULT_QUERY_VECTOR_CACHE_ENTRIES),
  // Vectors an org holds before its semantic search gets an HNSW index of its own (domain/store/vector-indexes.ts).
  VECTOR_INDEX_ORG_MIN: z.coerce.number().int().min(1).default(10_000),
  // Seals callers' own LLM keys while the background work they started runs (see domain/llm/escrow.ts).
  BYOK_ESCROW_KEY: z.string().min(32).optional(),
  // Encrypts every workflow input and result in Temporal's history (temporal/payload-codec.ts):
  // `id:base64-of-32-bytes[,id:key...]`; the first key encrypts, all of them decrypt (rotation).
  TEMPORAL_CODEC_KEYS: codecKeys.optional(),
  // Who may decrypt history through the codec endpoint the Temporal Web UI calls (api/temporal/codec.ts).
  OPERATOR_EMAILS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((e) => e.trim().toLowerCase())
        .filter(Boolean),
    )
    .optional(),
  TEMPORAL_UI_ORIGIN: z.url().optional(),
  SMTP_URL: optionalUrl,
  MAIL_FROM: z.string().min(3).default('Memory Service <no-reply@localhost>'),
  OIDC_ISSUER: optionalUrl,
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  CAPTCHA_SECRET: z.string().min(1).optional(),
  CAPTCHA_VERIFY_URL: z.url().default('https://challenges.cloudflare.com/turnstile/v0/siteverify'),
  // A finished export's file travels inline in GET /api/memories/exports/:id only up to this size; a larger
  // one is served by download_url alone, so polling a job stays cheap at any size.
  EXPORT_INLINE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(256 * 1024 * 1024)
    .default(8 * 1024 * 1024),
  // How long a request waits for a workflow's result (a consolidation detect or merge) before it answers 503
  // `still_running` with Retry-After; the work goes on, and asking again waits for the same run.
  WORKFLOW_WAIT_MS: z.coerce.number().int().min(100).max(600_000).default(25_000),
  WRITE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(60),
  // Reads (GETs and the POSTs that only read) per credential in a rolling second; 0, the default, as the contract
  // has it: reads unlimited. Searches are bounded per org anyway (domain/search/search-slots.ts).
  READ_RATE_LIMIT_PER_SECOND: z.coerce.number().int().min(0).max(100_000).default(0),
  // Exports one org may start in a rolling hour (0: no limit): each reads its whole selection and writes it again, as
  // a workflow whose start and finish no pace covers (activities/exports.ts paces only its pages).
  EXPORTS_PER_ORG_PER_HOUR: z.coerce.number().int().min(0).max(1_000_000).default(30),
  // Organizations one user may own, the one made at sign-up included: each brings free quotas of its own.
  ORGS_PER_USER_MAX: z.coerce.number().int().min(1).max(10_000).default(5),
  // Sign-ups per client address in a rolling hour (0: no limit).
  SIGNUPS_PER_ADDRESS_PER_HOUR: z.coerce.number().int().min(0).max(1_000_000).default(20),
  // The service as an OAuth authorization server for MCP clients (api/oauth/): how long an access token (an API
  // token named after the client) lives before the client renews it, how long an unused refresh token stays good,
  // and how many client registrations are kept at most.
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  OAUTH_REFRESH_TOKEN_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  OAUTH_CLIENTS_MAX: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
});

export type Env = z.infer<typeof envSchema>;

export interface Config extends Env {
  publicBaseUrl: string;
  // The public address is https (TLS usually ends at a proxy in front): cookies get Secure.
  publicHttps: boolean;
  // Reverse proxies in front of the API whose X-Forwarded-For entries are believed (the right-most ones).
  trustedProxies: number;
  // 32 bytes for AES-256-GCM. Local mode without BYOK_ESCROW_KEY derives it from DATABASE_URL; hosted mode
  // refuses to start without its own (docs/configuration.md).
  byokEscrowKey: Buffer;
  // The same rule for the keys of Temporal's payload codec; the first one encrypts.
  codecKeys: { id: string; key: Buffer }[];
  // Origin of the Temporal Web UI allowed to call the codec endpoint from the browser.
  temporalUiOrigin: string;
  temporal: TemporalEndpoint;
}

// How to reach Temporal: the frontend's address, TLS (false, or what to verify the server with and what to
// present as a client for mTLS, read from the files once at start), and an API key sent with every call.
export interface TemporalEndpoint {
  address: string;
  tls: false | { ca?: Buffer; cert?: Buffer; key?: Buffer; serverName?: string };
  apiKey?: string;
}

function temporalEndpoint(env: Env): TemporalEndpoint {
  const file = (name: 'TEMPORAL_TLS_CA_PATH' | 'TEMPORAL_TLS_CERT_PATH' | 'TEMPORAL_TLS_KEY_PATH'): Buffer | undefined => {
    const path = env[name];
    if (path === undefined) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      throw new ConfigError(`invalid configuration:\n  ${name}=${JSON.stringify(path)}: cannot be read (${(err as Error).message})`);
    }
  };
  if ((env.TEMPORAL_TLS_CERT_PATH === undefined) !== (env.TEMPORAL_TLS_KEY_PATH === undefined)) {
    throw new ConfigError(
      'invalid configuration:\n  TEMPORAL_TLS_CERT_PATH, TEMPORAL_TLS_KEY_PATH: mTLS needs both the client certificate and its key',
    );
  }
  const tlsOn =
    env.TEMPORAL_TLS ||
    [env.TEMPORAL_TLS_CA_PATH, env.TEMPORAL_TLS_CERT_PATH, env.TEMPORAL_TLS_SERVER_NAME, env.TEMPORAL_API_KEY].some((v) => v !== undefined);
  const tls = tlsOn
    ? {
        ca: file('TEMPORAL_TLS_CA_PATH'),
        cert: file('TEMPORAL_TLS_CERT_PATH'),
        key: file('TEMPORAL_TLS_KEY_PATH'),
        serverName: env.TEMPORAL_TLS_SERVER_NAME,
      }
    : false;
  return { address: env.TEMPORAL_ADDRESS, tls, ...(env.TEMPORAL_API_KEY ? { apiKey: env.TEMPORAL_API_KEY } : {}) };
}

export class ConfigError extends Error {}

// Empty strings count as unset so that `FOO= command` behaves like an absent FOO.
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = source[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const parsed = envSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? '(environment)');
      return `  ${name}=${JSON.stringify(input[name] ?? '')}: ${issue.message}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const env = parsed.data;
  // A hosted service must not run on keys anybody could derive from its database address, nor show its metrics
  // (route names, tenants' volumes) to whoever reaches the port.
  const missing =
    env.SERVICE_MODE === 'hosted'
      ? (['BYOK_ESCROW_KEY', 'TEMPORAL_CODEC_KEYS', 'METRICS_TOKEN'] as const).filter((name) => env[name] === undefined)
      : [];
  if (missing.length > 0) {
    throw new ConfigError(
      `invalid configuration:\n${missing.map((name) => `  ${name}="": hosted mode needs its own secret (scripts/start.sh writes development ones to .data/secrets.env; see docs/configuration.md)`).join('\n')}`,
    );
  }
  const publicBaseUrl = (env.PUBLIC_BASE_URL ?? `http://${env.HOST}:${env.PORT}`).replace(/\/+$/, '');
  const byokEscrowKey = createHash('sha256')
    .update(env.BYOK_ESCROW_KEY ?? `development:${env.DATABASE_URL}`)
    .digest();
  const codecKeys = env.TEMPORAL_CODEC_KEYS ?? [
    { id: 'local', key: createHash('sha256').update(`temporal-codec:${env.DATABASE_URL}`).digest() },
  ];
  const temporalUiOrigin = env.TEMPORAL_UI_ORIGIN ? new URL(env.TEMPORAL_UI_ORIGIN).origin : 'http://127.0.0.1:8233';
  // Behind HTTPS the API usually sits behind one TLS-terminating proxy; over plain HTTP, nothing is trusted.
  const publicHttps = publicBaseUrl.startsWith('https:');
  const trustedProxies = env.TRUSTED_PROXIES ?? (publicHttps ? 1 : 0);
  return {
    ...env,
    publicBaseUrl,
    publicHttps,
    trustedProxies,
    byokEscrowKey,
    codecKeys,
    temporalUiOrigin,
    temporal: temporalEndpoint(env),
  };
}

// The deadlines of the API's or the worker's pooled connections.
export function databaseDeadlines(config: Config, process: 'api' | 'worker'): DatabaseDeadlines {
  return {
    statementMs: process === 'api' ? config.DATABASE_STATEMENT_TIMEOUT_MS : config.WORKER_STATEMENT_TIMEOUT_MS,
    idleInTransactionMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    acquireMs: config.DATABASE_ACQUIRE_TIMEOUT_MS,
  };
}

// 0 turns a deadline off.
export interface DatabaseDeadlines {
  statementMs: number;
  idleInTransactionMs: number;
  acquireMs: number;
}

// For entry points: print the variable at fault and stop, rather than a stack trace.
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}
