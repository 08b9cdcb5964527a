import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { errorJson } from '../domain/error-codes.ts';

// The process's Prometheus metrics, served at /metrics by the API and by the worker. One registry per
// process, as Prometheus scrapes processes: every stack a process runs (tests run several) adds to it.
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const registers = [registry];
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpDuration = new Histogram({
  name: 'memsvc_http_request_duration_seconds',
  help: 'HTTP requests by route pattern, method and status, with their duration',
  labelNames: ['method', 'route', 'status'],
  buckets: SECONDS,
  registers,
});

export const memoriesSaved = new Counter({
  name: 'memsvc_memories_saved_total',
  help: 'Memories saved (each memory of a batch counts)',
  registers,
});

export const searches = new Counter({
  name: 'memsvc_searches_total',
  help: 'Search queries by mode (lexical, semantic, hybrid; similar: GET /api/memories/:id/similar); each query of a bulk search counts',
  labelNames: ['mode'],
  registers,
});

export const rateLimitRefusals = new Counter({
  name: 'memsvc_rate_limit_refusals_total',
  help: 'Requests refused with 429, by the limit that refused them',
  labelNames: ['limit'],
  registers,
});

export const webhookAttempts = new Counter({
  name: 'memsvc_webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome (delivered, failed)',
  labelNames: ['outcome'],
  registers,
});

export const webhookGaveUp = new Counter({
  name: 'memsvc_webhook_deliveries_failed_total',
  help: 'Webhook deliveries that failed their last attempt',
  registers,
});

export const webhookLag = new Histogram({
  name: 'memsvc_webhook_delivery_lag_seconds',
  help: 'From the event to its successful delivery, retries included',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000],
  registers,
});

export const queryVectorsServed = new Counter({
  name: 'memsvc_query_vectors_total',
  help:
    "Vectors of search queries by where they came from: the model, or the API's cache of recent queries (a text asked " +
    'twice in one bulk search is embedded once)',
  labelNames: ['source'],
  registers,
});

export const embeddingsComputed = new Counter({
  name: 'memsvc_embeddings_computed_total',
  help: 'Texts embedded by the worker (reused vectors of identical text not counted)',
  registers,
});

// Values read when Prometheus scrapes, from whatever sources this process's stacks registered.
type Sample = () => Promise<number> | number;
function sampledGauge(name: string, help: string): (sample: Sample) => () => void {
  const sources = new Set<Sample>();
  new Gauge({
    name,
    help,
    registers,
    async collect() {
      const values = await Promise.all([...sources].map(async (sample) => sample()));
      this.set(values.reduce((sum, v) => sum + v, 0));
    },
  });
  return (sample) => {
    sources.add(sample);
    return () => sources.delete(sample);
  };
}

export const watchOutboxDepth = sampledGauge('memsvc_outbox_pending', 'Outbox rows not dispatched yet (parked rows left out)');
export const watchOutboxAge = sampledGauge(
  'memsvc_outbox_oldest_pending_age_seconds',
  'Age of the oldest outbox row not dispatched yet; 0 when none waits',
);
export const watchOutboxFailed = sampledGauge('memsvc_outbox_failed', 'Outbox rows parked after their last failed dispatch');
export const watchEmbeddingBacklog = sampledGauge(
  'memsvc_embedding_backlog',
  "Memories without a vector of the worker's model, over every org (sampled at most every 30 s)",
);
const watchPoolTotal = sampledGauge('memsvc_db_pool_connections', 'Open database connections of this process');
const watchPoolIdle = sampledGauge('memsvc_db_pool_idle', 'Idle database connections of this process');
const watchPoolWaiting = sampledGauge('memsvc_db_pool_waiting', 'Queries waiting for a database connection in this process');

const watchLexicalCacheBytes = sampledGauge(
  'memsvc_lexical_cache_bytes',
  'Postings blocks kept decoded between lexical searches (LEXICAL_CACHE_MB)',
);

// Postings blocks lexical searches took from this process's cache (hit) or read from the database (miss).
export function watchLexicalCache(cache: { bytes: number; hits: number; misses: number }): void {
  watchLexicalCacheBytes(() => cache.bytes);
  new Counter({
    name: 'memsvc_lexical_cache_blocks_total',
    help: 'Postings blocks lexical searches took from the cache (hit) or read from the database (miss)',
    labelNames: ['result'],
    registers,
    collect() {
      this.reset();
      this.inc({ result: 'hit' }, cache.hits);
      this.inc({ result: 'miss' }, cache.misses);
    },
  });
}

export function watchPool(pool: { totalCount: number; idleCount: number; waitingCount: number }): () => void {
  const stops = [watchPoolTotal(() => pool.totalCount), watchPoolIdle(() => pool.idleCount), watchPoolWaiting(() => pool.waitingCount)];
  return () => stops.forEach((stop) => stop());
}

// Work to do right before a scrape (the worker copies the Temporal SDK's buffered metrics).
const beforeScrape = new Set<() => void>();
export const onScrape = (hook: () => void): void => void beforeScrape.add(hook);

export async function scrape(): Promise<string> {
  for (const hook of beforeScrape) hook();
  return registry.metrics();
}

// With METRICS_TOKEN set, a scrape must send it as a bearer token; without it, /metrics is open (the
// service listens on 127.0.0.1 by default; docs/operations.md says to set it anywhere else).
export function scrapeAllowed(authorization: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const given = Buffer.from(authorization ?? '');
  const wanted = Buffer.from(`Bearer ${token}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

// The worker's own endpoint: it serves no API, so /metrics is all it answers.
export function serveMetrics(port: number, host: string, token: string | undefined): Promise<Server> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== '/metrics' || req.method !== 'GET') {
      const message = `route ${req.method} ${path} not found: only GET /metrics is served here`;
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(errorJson('not found', message)));
    } else if (!scrapeAllowed(req.headers.authorization, token)) {
      const reason = req.headers.authorization ? 'unknown_token' : 'no_credential';
      const body = { ...errorJson('unauthorized', 'send METRICS_TOKEN as a bearer token'), reason };
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end(JSON.stringify(body));
    } else {
      scrape().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) =>
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(errorJson('internal_error', String(err)))),
      );
    }
  });
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}
