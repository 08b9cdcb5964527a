import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate, openOrm } from '../../infra/orm.ts';
import { PrivatePostgres } from '../support/private-postgres.ts';
import { spawnService, type ServiceProcess } from '../support/service-process.ts';
import { eventually } from '../support/stack.ts';
import { TemporalDevServer } from '../support/temporal-server.ts';
import { untilOutboxDrained } from '../support/outbox.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

// Under a steady stream of saves with a webhook endpoint, PostgreSQL is restarted, the Temporal server is killed
// and started again, and the worker is killed and started again, one after another, with nothing told to recover.
// This file runs its own PostgreSQL and Temporal server, so that it can take them down.
let database: PrivatePostgres;
let temporal: TemporalDevServer;
let temporalDir: string;
let hooks: WebhookReceiver;
let api: ServiceProcess;
let worker: ServiceProcess;
let env: Record<string, string>;
beforeAll(async () => {
  database = await PrivatePostgres.start();
  const orm = await openOrm({ databaseUrl: database.url, poolMax: 1 });
  await migrate(orm);
  await orm.close();
  temporalDir = await mkdtemp(join(tmpdir(), 'memsvc-faults-'));
  temporal = await TemporalDevServer.create(inject('temporalBin'), join(temporalDir, 'temporal.db'));
  await temporal.start();
  hooks = new WebhookReceiver();
  await hooks.start();
  env = { DATABASE_URL: database.url, TEMPORAL_ADDRESS: temporal.address, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'warn' };
  [api, worker] = await Promise.all([spawnService('api', env), spawnService('worker', env)]);
}, 120_000);
afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await hooks?.close();
  await temporal?.stop();
  await database?.stop();
  await rm(temporalDir, { recursive: true, force: true });
});

async function call(path: string, init: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${api.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...init.headers },
    body: JSON.stringify(init.body ?? {}),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

// Saves, 4 at a time, about 10 a second, until stopped; a save answered 503 (the database or Temporal away) is sent
// again with the same Idempotency-Key, as the clients do, so it is stored once whatever the first try did.
function steadySaves(token: string) {
  let stopped = false;
  let next = 0;
  const ids: string[] = [];
  const answered = new Map<number, number>();
  const savers = Array.from({ length: 4 }, async () => {
    while (!stopped) {
      const i = next++;
      for (;;) {
        const res = await call('/api/memories', {
          token,
          body: { content: `fault note ${i} marker fq${i}x` },
          headers: { 'idempotency-key': `fault-${i}` },
        });
        answered.set(res.status, (answered.get(res.status) ?? 0) + 1);
        if (res.status === 201) {
          ids.push(res.body.id);
          break;
        }
        // Only the service's own trouble, said as such: never a 500 (whose logged error the failure then shows).
        if (res.status !== 503) expect(res.status, JSON.stringify(api.logs.filter((l) => l.msg === 'unhandled error').slice(-3))).toBe(503);
        await new Promise((r) => setTimeout(r, 200));
      }
      await new Promise((r) => setTimeout(r, 400));
    }
  });
  return {
    ids,
    answered,
    stop: async () => {
      stopped = true;
      await Promise.all(savers);
    },
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('faults under a steady stream of saves', () => {
  it('loses and duplicates nothing across a PostgreSQL restart, a Temporal kill and a worker kill, and every part resumes on its own', async () => {
    const signup = await call('/api/auth/signup', {
      body: { email: 'faults@example.com', password: 'correct horse battery', name: 'Ada', org_name: 'Faults' },
    });
    expect(signup.status).toBe(201);
    const token: string = signup.body.api_token.raw;
    const orgId: string = signup.body.org.id;
    expect((await call('/api/webhooks', { token, body: { url: hooks.url, events: ['memory.saved'] } })).status).toBe(201);

    const saves = steadySaves(token);
    await pause(2_000);
    await database.down();
    await pause(3_000);
    await database.up();
    await pause(2_000);
    await temporal.stop('SIGKILL');
    await pause(3_000);
    await temporal.start();
    await pause(2_000);
    await worker.kill();
    worker = await spawnService('worker', env);
    await pause(2_000);
    await saves.stop();
    const ids = saves.ids;
    expect(ids.length).toBeGreaterThan(50);
    expect(saves.answered.get(503)).toBeGreaterThan(0);

    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      // Saves: each exactly once.
      const { rows: stored } = await db.query<{ id: string }>(`select id from memories where org_id = $1`, [orgId]);
      expect(stored.map((r) => r.id).sort()).toEqual([...ids].sort());
      // The relay: every outbox row dispatched, none parked.
      await untilOutboxDrained(db, 60_000);
      // The curator: every save's postings folded into the org's blocks.
      await eventually(
        async () => (await db.query(`select 1 from lexical_staged where org_id = $1 limit 1`, [orgId])).rowCount === 0,
        60_000,
      );
      // Deliveries: one per memory, each received under one webhook-id (a retried attempt keeps its id).
      await eventually(async () => hooks.webhookIdsByMemory().size === ids.length, 90_000);
      const webhookIds = hooks.webhookIdsByMemory();
      expect([...webhookIds.keys()].sort()).toEqual([...ids].sort());
      expect([...webhookIds.values()].every((set) => set.size === 1)).toBe(true);
    } finally {
      await db.end();
    }
    // Searches find what was saved across all three.
    for (const i of [0, Math.floor(ids.length / 2), ids.length - 1]) {
      const hit = await call('/api/memories/search', { token, body: { query: `fq${i}x` } });
      expect(hit.body.hits.map((h: { content: string }) => h.content)).toEqual([`fault note ${i} marker fq${i}x`]);
    }
  }, 300_000);
});
