import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withContext } from '../../domain/store/thread-context.ts';
import { createTestDatabase } from '../support/database.ts';
import { spawnService, type ServiceProcess } from '../support/service-process.ts';
import { eventually } from '../support/stack.ts';
import { parseVector } from '../../domain/store/vectors.ts';

// An operator switches the local model (EMBEDDING_LOCAL_MODEL, docs/configuration.md): the real API and worker
// processes with bge, then restarted with e5, over the same database. The worker's start-up backfill re-embeds
// the org with the new model, and search answers by the new model's vectors only.
let env: Record<string, string>;
let db: pg.Client;
const running: ServiceProcess[] = [];
const e5 = () => ({ EMBEDDING_LOCAL_MODEL: 'e5-small-v2', EMBEDDING_MODEL_DIR: process.env.TEST_E5_MODEL_DIR! });

async function start(extra: Record<string, string>): Promise<ServiceProcess> {
  const [api, worker] = await Promise.all([spawnService('api', { ...env, ...extra }), spawnService('worker', { ...env, ...extra })]);
  running.push(api, worker);
  return api;
}
async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((p) => p.stop()));
}

beforeAll(async () => {
  if (!process.env.TEST_E5_MODEL_DIR) throw new Error('TEST_E5_MODEL_DIR is not set: run the tests with `bash scripts/test.sh`');
  env = {
    DATABASE_URL: await createTestDatabase(),
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    LOG_LEVEL: 'warn',
    EMBEDDING_PROVIDER: 'local',
  };
  db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
}, 60_000);
afterAll(async () => {
  await Promise.all(running.map((p) => p.kill()));
  await db?.end();
});

const call = async (api: ServiceProcess, method: 'GET' | 'POST', path: string, token?: string, body?: unknown) => {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const status = async (api: ServiceProcess, token: string) => (await call(api, 'GET', '/api/memories/embeddings', token)).body;
const models = async () =>
  (await db.query<{ model: string; n: number }>('select model, count(*)::int as n from memory_embeddings group by model order by model'))
    .rows;
// Whether the second chunk of a thread is searched mixed with the first, both by `model`.
async function inContext(first: string, second: string, model: string): Promise<boolean> {
  const rows = (
    await db.query<{ memory_id: string; model: string; embedding: string; text_embedding: string }>(
      'select memory_id, model, embedding::text as embedding, text_embedding::text as text_embedding from memory_embeddings ' +
        'where memory_id = any($1::uuid[])',
      [[first, second]],
    )
  ).rows;
  const [a, b] = [rows.find((r) => r.memory_id === first), rows.find((r) => r.memory_id === second)];
  if (!a || !b || a.model !== model || b.model !== model) return false;
  const expected = withContext(parseVector(b.text_embedding), [parseVector(a.text_embedding)]);
  return parseVector(b.embedding).every((x, i) => Math.abs(x - expected[i]!) < 1e-5);
}

describe('a switch of the local model', () => {
  it('re-embeds the org in the background, and semantic search answers by the new model', async () => {
    let api = await start({});
    const signup = await call(api, 'POST', '/api/auth/signup', undefined, {
      email: `switch-${randomUUID()}@example.com`,
      password: 'correct horse battery',
      name: 'Ada',
      org_name: 'Switch',
    });
    expect(signup.status).toBe(201);
    const token: string = signup.body.api_token.raw;
    const contents = [
      'Deploys to production happen on Tuesdays',
      'Alice prefers tea over coffee',
      'Our invoices are due within 30 days',
      'The office plants are watered by Bob',
    ];
    const ids: string[] = [];
    for (const content of contents) {
      const res = await call(api, 'POST', '/api/memories', token, { content });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    // A thread of two turns: the second is searched with the first as its context, by either model.
    const turns: string[] = [];
    for (const [i, content] of ['Mia: Where are you moving next year?', 'Noah: Lisbon, in June.'].entries()) {
      turns.push((await call(api, 'POST', '/api/memories', token, { content, metadata: { parent_ref: 'move', chunk_index: i } })).body.id);
    }
    await eventually(async () => (await status(api, token)).pending === 0, 60_000);
    expect(await status(api, token)).toMatchObject({ model: 'bge-small-en-v1.5-int8', total: 6, embedded: 6 });
    expect(await inContext(turns[0]!, turns[1]!, 'bge-small-en-v1.5-int8')).toBe(true);

    await stopAll();
    api = await start(e5());
    // The new model is the one in use at once; the org's vectors are of the old one until the backfill reaches them.
    expect((await status(api, token)).model).toBe('e5-small-v2-int8');
    await eventually(async () => (await status(api, token)).pending === 0, 90_000);
    expect(await status(api, token)).toMatchObject({ model: 'e5-small-v2-int8', total: 6, embedded: 6 });
    // Each memory's vector was replaced, not added to.
    expect(await models()).toEqual([{ model: 'e5-small-v2-int8', n: 6 }]);
    expect(await inContext(turns[0]!, turns[1]!, 'e5-small-v2-int8')).toBe(true);

    const res = await call(api, 'POST', '/api/memories/search', token, { query: 'what day are releases shipped', mode: 'semantic', k: 2 });
    expect(res.status).toBe(200);
    expect(res.body.hits[0].id).toBe(ids[0]);
    await stopAll();
  }, 240_000);
});
