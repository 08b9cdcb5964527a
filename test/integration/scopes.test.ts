import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { eventually, signUp, startStack, subscribeToMemoryEvents, type SignedUp, type Stack } from '../support/stack.ts';

// user_id, agent_id and run_id: who and what a memory is about, set on every create path and on update, returned,
// exported, and filterable everywhere memories are listed or searched.
let stack: Stack;
let a: SignedUp;
const ids: Record<string, string> = {};
beforeAll(async () => {
  stack = await startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  await subscribeToMemoryEvents(stack, a.org.id);
  const single = await stack.api.post('/api/memories', {
    token: a.token,
    body: { content: 'Alice prefers window seats on long flights', user_id: 'alice', agent_id: 'travel-bot', run_id: 'run-1' },
  });
  expect(single.status).toBe(201);
  ids.alice = single.body.id;
  const batch = await stack.api.post('/api/memories/batch', {
    token: a.token,
    body: {
      memories: [
        { content: 'Bob prefers aisle seats on long flights', user_id: 'bob', agent_id: 'travel-bot', run_id: 'run-2' },
        { content: 'Seats on long flights should be booked early', agent_id: 'travel-bot' },
        { content: 'Alice is allergic to peanuts', user_id: 'alice', agent_id: 'food-bot' },
      ],
    },
  });
  expect(batch.body.created).toBe(3);
  [ids.bob, ids.shared, ids.aliceFood] = batch.body.results.map((r: { id: string }) => r.id);
  await eventually(async () => (await stack.api.get('/api/memories/embeddings', { token: a.token })).body.embedded === 4, 60_000);
});
afterAll(async () => stack?.close());

const hitsOf = (res: { body: { hits: { id: string }[] } }) => res.body.hits.map((h) => h.id).sort();

describe('scopes', () => {
  it('are returned on the rows that have them and left out of those that do not', async () => {
    const alice = (await stack.api.get(`/api/memories/${ids.alice}`, { token: a.token })).body;
    expect(alice).toMatchObject({ user_id: 'alice', agent_id: 'travel-bot', run_id: 'run-1' });
    const shared = (await stack.api.get(`/api/memories/${ids.shared}`, { token: a.token })).body;
    expect(shared.agent_id).toBe('travel-bot');
    expect('user_id' in shared || 'run_id' in shared).toBe(false);
    // The memory.saved event carries them as the row does.
    const [event] = await query(
      stack.orm.em.fork(),
      sql<{ data: Record<string, unknown> }>`select data from events where org_id = ${a.org.id} and data->>'id' = ${ids.bob}`,
    );
    expect(event!.data).toMatchObject({ user_id: 'bob', agent_id: 'travel-bot', run_id: 'run-2' });
  });

  it('filter lists (query and body), every search mode, bulk search and similar memories', async () => {
    const legacy = await stack.api.get('/api/memories?user_id=alice', { token: a.token });
    expect(legacy.body.map((m: { id: string }) => m.id).sort()).toEqual([ids.alice, ids.aliceFood].sort());
    const listed = await stack.api.post('/api/memories/list', { token: a.token, body: { agent_id: 'travel-bot', user_id: 'alice' } });
    expect(listed.body).toMatchObject({ total: 1, memories: [expect.objectContaining({ id: ids.alice })] });
    for (const mode of ['lexical', 'semantic', 'hybrid']) {
      const bob = await stack.api.post('/api/memories/search', {
        token: a.token,
        body: { query: 'which seat on long flights', mode, user_id: 'bob' },
      });
      expect(hitsOf(bob), mode).toEqual([ids.bob]);
      const run = await stack.api.post('/api/memories/search', {
        token: a.token,
        body: { query: 'seats on flights', mode, run_id: 'run-1' },
      });
      expect(hitsOf(run), mode).toEqual([ids.alice]);
    }
    const bulk = await stack.api.post('/api/memories/search/bulk', {
      token: a.token,
      body: { queries: ['seats', 'peanuts'], mode: 'lexical', user_id: 'alice' },
    });
    expect(bulk.body.results.map((r: { hits: { id: string }[] }) => r.hits.map((h) => h.id))).toEqual([[ids.alice], [ids.aliceFood]]);
    const similar = await stack.api.get(`/api/memories/${ids.alice}/similar?agent_id=travel-bot`, { token: a.token });
    expect(hitsOf(similar)).toEqual([ids.bob, ids.shared].sort());
  });

  it('change on update, where null removes one, and travel into exports, whose filters take them too', async () => {
    const moved = await stack.api.patch(`/api/memories/${ids.shared}`, { token: a.token, body: { user_id: 'carol', agent_id: null } });
    expect(moved.status).toBe(200);
    expect(moved.body.user_id).toBe('carol');
    expect('agent_id' in moved.body).toBe(false);
    const batch = await stack.api.put('/api/memories/batch', { token: a.token, body: { updates: [{ id: ids.bob, run_id: 'run-9' }] } });
    expect(batch.body.results[0]).toMatchObject({ user_id: 'bob', run_id: 'run-9' });

    const started = await stack.api.post('/api/memories/exports', {
      token: a.token,
      body: { format: 'ndjson', filters: { user_id: 'alice' } },
    });
    const done = await eventually(async () => {
      const res = await stack.api.get(`/api/memories/exports/${started.body.id}`, { token: a.token });
      return res.body.status === 'completed' && res.body;
    });
    const rows = done.payload
      .trimEnd()
      .split('\n')
      .map((l: string) => JSON.parse(l));
    expect(rows.map((r: { id: string }) => r.id).sort()).toEqual([ids.alice, ids.aliceFood].sort());
    expect(rows.find((r: { id: string }) => r.id === ids.aliceFood)).toMatchObject({ user_id: 'alice', agent_id: 'food-bot' });
  });

  it('refuse ids that are empty, too long or hold control characters, naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ content: 'x', user_id: '' }, 'body.user_id'],
      [{ content: 'x', agent_id: 'a'.repeat(201) }, 'body.agent_id'],
      [{ content: 'x', run_id: 'run\n1' }, 'body.run_id'],
      [{ content: 'x', user_id: 42 }, 'body.user_id'],
    ];
    for (const [body, path] of cases) {
      const res = await stack.api.post('/api/memories', { token: a.token, body });
      expect(res.status, path).toBe(400);
      expect(res.body.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    const search = await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'x', user_id: '' } });
    expect(search.status).toBe(400);
  });
});
