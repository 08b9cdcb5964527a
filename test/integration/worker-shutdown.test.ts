import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database.ts';
import { spawnService, type ServiceProcess } from '../support/service-process.ts';
import { eventually } from '../support/stack.ts';

// The real worker process with the real model, stopped (SIGTERM, as a deploy or scripts/start.sh's Ctrl-C does)
// while its curator embeds. An exit in the middle of a pass through the model used to abort the process
// (onnxruntime answering into a thread already torn down); now the worker drains and closes the model first.
let env: Record<string, string>;
let db: pg.Client;
let api: ServiceProcess;
const workers: ServiceProcess[] = [];
beforeAll(async () => {
  env = { DATABASE_URL: await createTestDatabase(), TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`, LOG_LEVEL: 'warn' };
  db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  // The model's worker from the start: a signup waits for its workflow.
  const [apiProcess, worker] = await Promise.all([
    spawnService('api', env),
    spawnService('worker', { ...env, EMBEDDING_PROVIDER: 'local' }),
  ]);
  api = apiProcess;
  workers.push(worker);
}, 120_000);
afterAll(async () => {
  await Promise.all([api, ...workers].filter(Boolean).map((p) => p!.kill()));
  await db?.end();
});

const post = async (path: string, body: unknown, token?: string) => {
  const res = await fetch(`${api.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const vectors = async () => (await db.query<{ n: number }>('select count(*)::int as n from memory_embeddings')).rows[0]!.n;

describe('the worker stopped while it embeds', () => {
  it('exits cleanly, and the next worker embeds what is left', async () => {
    const signup = await post('/api/auth/signup', {
      email: `stop-${randomUUID()}@example.com`,
      password: 'correct horse battery',
      name: 'Ada',
      org_name: 'Stop',
    });
    expect(signup.status).toBe(201);
    const token: string = signup.body.api_token.raw;
    // Long enough that embedding them all takes the model a few seconds.
    const COUNT = 300;
    for (let i = 0; i < COUNT; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, j) => {
          const res = await post(
            '/api/memories',
            {
              content: `Release note ${i + j}: ${'the deploy pipeline rolled the service out to every region after the canary passed. '.repeat(6)}`,
            },
            token,
          );
          expect(res.status).toBe(201);
        }),
      );
    }

    const worker = workers[0]!;
    await eventually(async () => (await vectors()) > 0, 90_000);
    const before = await vectors();
    expect(before).toBeLessThan(COUNT);
    await worker.stop();
    expect(worker.child.signalCode).toBeNull();
    expect(worker.child.exitCode).toBe(0);

    const next = await spawnService('worker', { ...env, EMBEDDING_PROVIDER: 'local' });
    workers.push(next);
    await eventually(async () => (await vectors()) === COUNT, 90_000);
    await next.stop();
    expect(next.child.exitCode).toBe(0);
  }, 240_000);
});
