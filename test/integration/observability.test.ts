import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../support/api-client.ts';
import { createTestDatabase } from '../support/database.ts';
import { OtlpReceiver } from '../support/otlp-receiver.ts';
import { spawnService, type ServiceProcess } from '../support/service-process.ts';
import { eventually, signUp } from '../support/stack.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

// The real entry points (api/main.ts, temporal/worker-main.ts) as separate processes, exporting their
// spans to a local OTLP receiver and serving /metrics, as a deployment runs them.
const METRICS_TOKEN = randomBytes(24).toString('hex');
let otlp: OtlpReceiver;
let hooks: WebhookReceiver;
let api: ServiceProcess;
let worker: ServiceProcess;
let client: ApiClient;
let databaseUrl: string;
beforeAll(async () => {
  otlp = new OtlpReceiver();
  hooks = new WebhookReceiver();
  await Promise.all([otlp.start(), hooks.start()]);
  const env = {
    DATABASE_URL: (databaseUrl = await createTestDatabase()),
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    METRICS_TOKEN,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'debug',
  };
  [api, worker] = await Promise.all([spawnService('api', env), spawnService('worker', env)]);
  client = new ApiClient(api.url);
}, 120_000);
afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await Promise.all([otlp?.close(), hooks?.close()]);
});

// The sum of a metric's samples whose labels include `labels`, from Prometheus' text format.
function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(match[3]);
  }
  return sum;
}

const scrape = async (process: ServiceProcess) => {
  const res = await fetch(`${process.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
};

describe('traces', () => {
  it("continues a request's trace through the outbox into its workflow and the workflow's activities, and log lines name both", async () => {
    const a = await signUp(client);
    const traceId = randomBytes(16).toString('hex');
    const requestId = `trace-test-${randomUUID()}`;
    const started = await client.post('/api/memories/exports', {
      token: a.token,
      body: { format: 'ndjson' },
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, 'x-request-id': requestId },
    });
    expect(started.status).toBe(202);
    expect(started.headers.get('x-request-id')).toBe(requestId);

    const spans = await eventually(async () => {
      const mine = otlp.spans.filter((s) => s.traceId === traceId);
      return ['POST /api/memories/exports', 'RunWorkflow:exportWorkflow', 'RunActivity:exportPage'].every((name) =>
        mine.some((s) => s.name === name),
      )
        ? mine
        : undefined;
    }, 60_000);
    const named = (name: string) => spans.find((s) => s.name === name)!;
    // One trace, each span the child of the one before: the request, the relay's start of the workflow (from
    // the outbox row, in the worker process), the workflow run, its scheduling of an activity, the activity.
    const server = named('POST /api/memories/exports');
    expect(server).toMatchObject({
      service: 'memsvc-api',
      attributes: { 'http.route': '/api/memories/exports', 'http.response.status_code': 202, 'memsvc.request_id': requestId },
    });
    expect(named('StartWorkflow:exportWorkflow')).toMatchObject({ service: 'memsvc-worker', parentSpanId: server.spanId });
    expect(named('RunWorkflow:exportWorkflow')).toMatchObject({
      service: 'memsvc-worker',
      parentSpanId: named('StartWorkflow:exportWorkflow').spanId,
    });
    const activity = named('RunActivity:exportPage');
    const scheduled = spans.find((s) => s.spanId === activity.parentSpanId)!;
    expect(scheduled).toMatchObject({ name: 'StartActivity:exportPage', parentSpanId: named('RunWorkflow:exportWorkflow').spanId });

    // Log lines name the trace and the request: the API's request line, and the worker's line about the
    // outbox row it turned into this workflow (the relay runs in the worker process).
    expect(api.logs.find((l) => l.msg === 'request' && l.request_id === requestId)).toMatchObject({
      trace_id: traceId,
      path: '/api/memories/exports',
      status: 202,
    });
    expect(worker.logs.find((l) => l.msg === 'outbox row dispatched' && l.workflowId === `export-${started.body.id}`)).toMatchObject({
      trace_id: traceId,
      request_id: requestId,
    });
  });
});

describe('metrics', () => {
  it('answers only with METRICS_TOKEN when one is set', async () => {
    for (const process of [api, worker]) {
      expect((await fetch(`${process.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${process.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    }
  });

  it('move when the work happens: requests, saves, searches by mode, refusals, webhook deliveries, the outbox, Temporal', async () => {
    const a = await signUp(client);
    await client.post('/api/webhooks', { token: a.token, body: { url: hooks.url, events: ['memory.saved'] } });
    const before = { api: await scrape(api), worker: await scrape(worker) };

    for (const content of ['Deploys happen on Tuesdays', 'The staging database is Postgres 18', 'Rollbacks need two approvals']) {
      expect((await client.post('/api/memories', { token: a.token, body: { content } })).status).toBe(201);
    }
    await client.post('/api/memories/search', { token: a.token, body: { query: 'deploys' } });
    await client.post('/api/memories/search/bulk', { token: a.token, body: { queries: ['staging', 'rollbacks'] } });
    for (let i = 0; i < 11; i++) await client.post('/api/auth/login', { body: { email: a.user.email, password: 'not the password' } });
    await eventually(async () => hooks.received.length >= 3, 30_000);

    const after = { api: await scrape(api), worker: await scrape(worker) };
    const delta = (side: 'api' | 'worker', name: string, labels: Record<string, string> = {}) =>
      sampleSum(after[side], name, labels) - sampleSum(before[side], name, labels);
    expect(delta('api', 'memsvc_memories_saved_total')).toBe(3);
    expect(delta('api', 'memsvc_http_request_duration_seconds_count', { route: '/api/memories', method: 'POST', status: '201' })).toBe(3);
    expect(delta('api', 'memsvc_searches_total', { mode: 'lexical' })).toBe(3);
    expect(delta('api', 'memsvc_rate_limit_refusals_total', { limit: 'too_many_attempts' })).toBeGreaterThanOrEqual(1);
    expect(sampleSum(after.api, 'memsvc_db_pool_connections')).toBeGreaterThan(0);

    await eventually(async () => {
      const now = await scrape(worker);
      return (
        sampleSum(now, 'memsvc_webhook_delivery_attempts_total', { outcome: 'delivered' }) -
          sampleSum(before.worker, 'memsvc_webhook_delivery_attempts_total', { outcome: 'delivered' }) >=
        3
      );
    }, 30_000);
    const worker2 = await scrape(worker);
    expect(
      sampleSum(worker2, 'memsvc_webhook_delivery_lag_seconds_count') -
        sampleSum(before.worker, 'memsvc_webhook_delivery_lag_seconds_count'),
    ).toBeGreaterThanOrEqual(3);
    expect(worker2).toMatch(/^memsvc_outbox_pending \d+$/m);
    expect(worker2).toMatch(/^memsvc_outbox_oldest_pending_age_seconds [\d.e+-]+$/m);
    // The Temporal SDK's own metrics, from the worker's core.
    expect(sampleSum(worker2, 'temporal_activity_execution_latency_count')).toBeGreaterThan(0);
  });
});

describe('logs', () => {
  it('note a client that left in the middle of a download at debug level, as nothing that failed', async () => {
    const a = await signUp(client);
    // A finished export of 32 pages of about 1 MB, stored as the workflow stores them.
    const exportId = randomUUID();
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      await db.query(
        `insert into export_jobs (id, org_id, format, filters, status, row_count, created_at, completed_at)
          values ($1, $2, 'ndjson', '{}', 'completed', 32000, now(), now())`,
        [exportId, a.org.id],
      );
      await db.query(
        `insert into export_chunks (org_id, export_id, seq, data)
          select $1, $2, seq, repeat('{"content":"a line of an export"}' || chr(10), 30000) from generate_series(0, 31) seq`,
        [a.org.id, exportId],
      );
    } finally {
      await db.end();
    }
    const leave = new AbortController();
    const file = await fetch(`${api.url}/api/memories/exports/${exportId}/download`, {
      headers: { authorization: `Bearer ${a.token}` },
      signal: leave.signal,
    });
    expect((await file.body!.getReader().read()).done).toBe(false);
    leave.abort();
    const line = await eventually(async () => api.logs.find((l) => l.msg === 'the client left before its response ended'));
    expect(line).toMatchObject({ level: 20 });
    expect(api.logs.filter((l) => Number(l.level) >= 50)).toEqual([]);
  });
});
