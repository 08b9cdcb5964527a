import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// The general filter grammar (`filters`): AND / OR / NOT over fields and metadata keys, on list (body and query),
// search, bulk search, export and deletion by filter; every unknown field or operator is a 400 naming it.
let stack: Stack;
let a: SignedUp;
const MARCH = Date.UTC(2026, 2, 14);
const ids: Record<string, string> = {};
const rows: [string, Record<string, unknown>][] = [
  [
    'alice1',
    {
      content: 'Alice books window seats on trains',
      user_id: 'alice',
      tags: ['travel'],
      metadata: { stars: 5, category: 'Travel', labels: ['seat', 'rail'] },
      occurred_at: MARCH,
    },
  ],
  [
    'alice2',
    { content: 'Alice is vegetarian', user_id: 'alice', agent_id: 'chef', tags: ['food'], metadata: { stars: 3, category: 'food' } },
  ],
  [
    'bob1',
    {
      content: 'Bob books aisle seats on planes',
      user_id: 'bob',
      tags: ['travel', 'air'],
      metadata: { stars: 4, category: 'travel', labels: ['seat'] },
      namespace: 'work',
    },
  ],
  ['bob2', { content: 'Bob drinks oat milk', user_id: 'bob', tags: ['food'], metadata: { stars: '4', category: null }, source: 'slack' }],
  ['none', { content: 'Trains in the city run every ten minutes', tags: [], metadata: {} }],
];
beforeAll(async () => {
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  const res = await stack.api.post('/api/memories/batch', { token: a.token, body: { memories: rows.map(([, body]) => body) } });
  expect(res.body.created).toBe(rows.length);
  res.body.results.forEach((r: { id: string }, i: number) => (ids[rows[i]![0]] = r.id));
});
afterAll(async () => stack?.close());

const names = (memories: { id: string }[]) => memories.map((m) => Object.entries(ids).find(([, id]) => id === m.id)![0]).sort();
const list = async (filters: unknown, extra: Record<string, unknown> = {}) => {
  const res = await stack.api.post('/api/memories/list', { token: a.token, body: { filters, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.total).toBe(res.body.memories.length);
  return names(res.body.memories);
};

describe('filter expressions', () => {
  it('select by fields, metadata keys and time, with AND, OR and NOT', async () => {
    const cases: [unknown, string[]][] = [
      [{ user_id: 'alice' }, ['alice1', 'alice2']],
      [{ user_id: { ne: 'alice' } }, ['bob1', 'bob2', 'none']],
      [{ user_id: '*' }, ['alice1', 'alice2', 'bob1', 'bob2']],
      [{ user_id: { in: ['alice', 'carol'] }, tags: 'food' }, ['alice2']],
      [{ user_id: { nin: ['alice'] } }, ['bob1', 'bob2', 'none']],
      [{ agent_id: '*' }, ['alice2']],
      [{ OR: [{ agent_id: 'chef' }, { tags: { contains: 'air' } }] }, ['alice2', 'bob1']],
      [{ NOT: { tags: { in: ['travel', 'food'] } } }, ['none']],
      [{ NOT: [{ user_id: 'alice' }, { user_id: 'bob' }] }, ['none']],
      [{ AND: [{ tags: 'travel' }, { NOT: { project: 'work' } }] }, ['alice1']],
      [{ tags: { nin: ['travel'] } }, ['alice2', 'bob2', 'none']],
      [{ tags: '*' }, ['alice1', 'alice2', 'bob1', 'bob2']],
      [{ metadata: { stars: { gte: 4 } } }, ['alice1', 'bob1']],
      [{ metadata: { stars: { gt: 3, lt: 5 } } }, ['bob1']],
      [{ metadata: { stars: '4' } }, ['bob2']],
      [{ metadata: { stars: { in: [3, '4'] } } }, ['alice2', 'bob2']],
      [{ metadata: { category: { icontains: 'TRAV' } } }, ['alice1', 'bob1']],
      [{ metadata: { category: { contains: 'trav' } } }, ['bob1']],
      [{ metadata: { category: '*' } }, ['alice1', 'alice2', 'bob1']],
      [{ metadata: { category: null } }, ['bob2']],
      [{ metadata: { category: { ne: 'food' } } }, ['alice1', 'bob1', 'bob2', 'none']],
      [{ metadata: { labels: { contains: 'rail' } } }, ['alice1']],
      [{ metadata: { labels: { icontains: 'SEA' } } }, ['alice1', 'bob1']],
      [{ content: { icontains: 'TRAINS' } }, ['alice1', 'none']],
      [{ source: 'slack' }, ['bob2']],
      [{ namespace: { in: ['work'] } }, ['bob1']],
      [{ occurred_at: { lt: '2026-03-15' } }, ['alice1']],
      [{ occurred_at: { gte: MARCH, lte: MARCH } }, ['alice1']],
      [{ created_at: { gt: MARCH } }, ['alice1', 'alice2', 'bob1', 'bob2', 'none']],
      [{ id: { in: [ids.bob2, ids.none] } }, ['bob2', 'none']],
      [{}, ['alice1', 'alice2', 'bob1', 'bob2', 'none']],
    ];
    for (const [filters, expected] of cases) expect(await list(filters), JSON.stringify(filters)).toEqual(expected);
    // With the other filter fields, by AND.
    expect(await list({ tags: 'travel' }, { user_id: 'bob' })).toEqual(['bob1']);
  });

  it('apply to search, bulk search, the legacy list query, export and deletion by filter', async () => {
    const search = await stack.api.post('/api/memories/search', {
      token: a.token,
      body: { query: 'seats trains planes', filters: { OR: [{ user_id: 'bob' }, { tags: '*', metadata: { stars: 5 } }] } },
    });
    expect(names(search.body.hits)).toEqual(['alice1', 'bob1']);
    const bulk = await stack.api.post('/api/memories/search/bulk', {
      token: a.token,
      body: { queries: ['seats', 'trains'], filters: { user_id: { ne: 'bob' } } },
    });
    expect(bulk.body.results.map((r: { hits: { id: string }[] }) => names(r.hits))).toEqual([['alice1'], ['alice1', 'none']]);
    const legacy = await stack.api.get(`/api/memories?filters=${encodeURIComponent(JSON.stringify({ metadata: { stars: { lte: 3 } } }))}`, {
      token: a.token,
    });
    expect(names(legacy.body)).toEqual(['alice2']);

    const exported = await stack.api.post('/api/memories/exports', {
      token: a.token,
      body: { format: 'ndjson', filters: { filters: { tags: 'food' } } },
    });
    expect(exported.status).toBe(202);
    const done = await eventually(async () => {
      const res = await stack.api.get(`/api/memories/exports/${exported.body.id}`, { token: a.token });
      return res.body.status === 'completed' && res.body;
    });
    expect(done.filters).toEqual({ filters: { tags: 'food' } });
    expect(
      names(
        done.payload
          .trimEnd()
          .split('\n')
          .map((l: string) => JSON.parse(l)),
      ),
    ).toEqual(['alice2', 'bob2']);

    const deletion = await stack.api.post('/api/memories/deletions', {
      token: a.token,
      body: { filters: { filters: { content: { contains: 'oat milk' } } } },
    });
    expect(deletion.status).toBe(202);
    expect(deletion.body.matched).toBe(1);
    await eventually(
      async () => (await stack.api.get(`/api/memories/deletions/${deletion.body.id}`, { token: a.token })).body.status === 'completed',
    );
    expect((await stack.api.get(`/api/memories/${ids.bob2}`, { token: a.token })).status).toBe(404);
    const empty = await stack.api.post('/api/memories/deletions', { token: a.token, body: { filters: { filters: {} } } });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('filter_required');
  });

  it('refuse what they do not know or cannot hold, naming where', async () => {
    const deep = (n: number): Record<string, unknown> => (n === 0 ? { user_id: 'x' } : { AND: [deep(n - 1)] });
    const cases: [unknown, string, RegExp][] = [
      [{ colour: 'red' }, 'body.filters.colour', /unknown filter field "colour"/],
      [{ AND: [{ user_id: { like: 'a%' } }] }, 'body.filters.AND.0.user_id.like', /unknown operator "like"/],
      [{ user_id: { gt: 'a' } }, 'body.filters.user_id.gt', /does not apply here/],
      [{ created_at: '*' }, 'body.filters.created_at', /always set/],
      [{ created_at: { gte: 'last week' } }, 'body.filters.created_at.gte', /instant/],
      [{ id: { in: ['not-a-uuid'] } }, 'body.filters.id.in.0', /UUID/],
      [{ user_id: { in: Array.from({ length: 101 }, (_, i) => `u${i}`) } }, 'body.filters.user_id.in', /1 to 100/],
      [{ OR: [] }, 'body.filters.OR', /non-empty list/],
      [{ metadata: { stars: { gte: true } } }, 'body.filters.metadata.stars.gte', /numbers or strings/],
      [{ metadata: { stars: { between: [1, 2] } } }, 'body.filters.metadata.stars.between', /unknown operator/],
      [{ content: 'exact text' }, 'body.filters.content', /operators: contains, icontains/],
      [deep(5), 'body.filters.AND.0.AND.0.AND.0.AND.0.AND.0', /at most 5 levels/],
      [{ OR: Array.from({ length: 65 }, (_, i) => ({ user_id: `u${i}` })) }, 'body.filters', /at most 64 conditions/],
      ['user_id = alice', 'body.filters', /object|record/i],
    ];
    for (const [filters, path, message] of cases) {
      const res = await stack.api.post('/api/memories/list', { token: a.token, body: { filters } });
      expect(res.status, JSON.stringify(filters)).toBe(400);
      const issue = res.body.issues.find((i: { path: string }) => i.path === path);
      expect(issue, `${JSON.stringify(filters)}: ${JSON.stringify(res.body.issues)}`).toBeDefined();
      expect(issue.message).toMatch(message);
    }
    const search = await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'x', filters: { agent: 'chef' } } });
    expect(search.status).toBe(400);
    const legacy = await stack.api.get(`/api/memories?filters=${encodeURIComponent('{"user_id":')}`, { token: a.token });
    expect(legacy.status).toBe(400);
    const legacyField = await stack.api.get(`/api/memories?filters=${encodeURIComponent('{"usr":"a"}')}`, { token: a.token });
    expect(legacyField.status).toBe(400);
    expect(JSON.stringify(legacyField.body)).toContain('unknown filter field \\"usr\\"');
  });
});
