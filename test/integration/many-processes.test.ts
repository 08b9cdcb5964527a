import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database.ts';
import { spawnService, type ServiceProcess } from '../support/service-process.ts';
import { eventually } from '../support/stack.ts';
import { untilOutboxDrained } from '../support/outbox.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

// Two API processes and two workers (each with its outbox relay) over one database and one Temporal task
// queue, as a deployment scales out; one API and one worker are SIGKILLed in the middle of a stream of
// saves, and started again.
let env: Record<string, string>;
let hooks: WebhookReceiver;
let db: pg.Client;
const apis: ServiceProcess[] = [];
const workers: ServiceProcess[] = [];
beforeAll(async () => {
  hooks = new WebhookReceiver();
  await hooks.start();
  env = {
    DATABASE_URL: await createTestDatabase(),
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'warn',
  };
  db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  apis.push(...(await Promise.all([spawnService('api', env), spawnService('api', env)])));
  workers.push(...(await Promise.all([spawnService('worker', env), spawnService('worker', env)])));
}, 120_000);
afterAll(async () => {
  await Promise.all([...apis, ...workers].map((p) => p.stop()));
  await db?.end();
  await hooks?.close();
});

// What a load balancer does: send to the next API process, and to another when one does not answer.
let turn = 0;
async function call(method: string, path: string, init: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  for (let tries = 0; ; tries++) {
    const api = apis[turn++ % apis.length]!;
    try {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...init.headers },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      return { status: res.status, body: (await res.json().catch(() => null)) as any };
    } catch (err) {
      if (tries > 20) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

// Saves `count` memories, 8 at a time; a save whose process died under it is sent again with the same
// Idempotency-Key, so it is stored once whether or not the first try got through.
async function saveAll(
  token: string,
  from: number,
  count: number,
  onProgress: (done: number) => Promise<void> = async () => undefined,
): Promise<string[]> {
  const ids: string[] = [];
  let next = from;
  let done = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < from + count) {
        const i = next++;
        const key = `save-${i}`;
        for (;;) {
          const res = await call('POST', '/api/memories', {
            token,
            body: { content: `scale-out note ${i} marker zq${i}x` },
            headers: { 'idempotency-key': key },
          });
          if (res.status === 201) {
            ids.push(res.body.id);
            break;
          }
          // A 5xx from a process going down: try again, elsewhere.
          expect(res.status).toBeGreaterThanOrEqual(500);
        }
        await onProgress(++done);
      }
    }),
  );
  return ids;
}

describe('two API processes and two workers, one of each killed and restarted', () => {
  it('loses and duplicates nothing: saves, searches, the outbox, webhook deliveries, exports', async () => {
    const signup = await call('POST', '/api/auth/signup', {
      body: { email: `scale-${randomUUID()}@example.com`, password: 'correct horse battery', name: 'Ada', org_name: 'Scale' },
    });
    expect(signup.status).toBe(201);
    const token: string = signup.body.api_token.raw;
    expect((await call('POST', '/api/webhooks', { token, body: { url: hooks.url, events: ['memory.saved'] } })).status).toBe(201);

    const first = await saveAll(token, 0, 100);
    const exportBefore = await call('POST', '/api/memories/exports', { token, body: { format: 'ndjson' } });
    expect(exportBefore.status).toBe(202);

    // Thirty saves into the second hundred, API 0 and worker 0 die without any chance to clean up; new ones
    // take their places a moment later.
    let killed: Promise<void> | undefined;
    const second = await saveAll(token, 100, 100, async (done) => {
      if (done !== 30) return;
      killed = (async () => {
        await Promise.all([apis[0]!.kill(), workers[0]!.kill()]);
        const [api, worker] = await Promise.all([spawnService('api', env), spawnService('worker', env)]);
        apis[0] = api;
        workers[0] = worker;
      })();
    });
    await killed;
    const ids = [...first, ...second];
    expect(new Set(ids).size).toBe(200);

    // Saves: each exactly once.
    const { rows: stored } = await db.query<{ content: string; n: number }>(
      `select content, count(*)::int as n from memories group by content`,
    );
    expect(stored).toHaveLength(200);
    expect(stored.every((r) => r.n === 1)).toBe(true);
    const listed = await call('POST', '/api/memories/list', { token, body: { limit: 1 } });
    expect(listed.body.total).toBe(200);

    // Searches through either process find what any process saved.
    for (const i of [3, 99, 130, 199]) {
      const hit = await call('POST', '/api/memories/search', { token, body: { query: `zq${i}x` } });
      expect(hit.body.hits.map((h: { content: string }) => h.content)).toEqual([`scale-out note ${i} marker zq${i}x`]);
    }

    // The outbox: every row dispatched, none parked.
    await untilOutboxDrained(db, 30_000);

    // Webhooks: one delivery per saved memory, each received (a delivery whose worker died mid-attempt may
    // arrive twice, under the same webhook-id, as at-least-once delivery allows).
    await eventually(async () => hooks.webhookIdsByMemory().size === 200, 90_000);
    const webhookIdsPerMemory = hooks.webhookIdsByMemory();
    expect([...webhookIdsPerMemory.keys()].sort()).toEqual([...ids].sort());
    expect([...webhookIdsPerMemory.values()].every((set) => set.size === 1)).toBe(true);

    // Exports: the one running across the kill and a new one both finish, every row once.
    for (const started of [exportBefore.body, (await call('POST', '/api/memories/exports', { token, body: { format: 'ndjson' } })).body]) {
      const done = await eventually(async () => {
        const res = await call('GET', `/api/memories/exports/${started.id}`, { token });
        return res.body.status === 'pending' ? undefined : res.body;
      }, 60_000);
      expect(done.status).toBe('completed');
      const rows = (done.payload as string)
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).id as string);
      expect(new Set(rows).size).toBe(rows.length);
      expect(rows.length).toBe(done.row_count);
    }
    const last = await call('GET', '/api/memories/exports', { token });
    expect(last.body.exports[0].row_count).toBe(200);
  }, 300_000);
});
