import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { eventually, signUp, startStack, subscribeToMemoryEvents, type SignedUp, type Stack } from '../support/stack.ts';

// occurred_at: when what a memory tells happened (event time), set by the caller on every create path and on
// update, the save's time by default, returned, exported, and filterable wherever memories are listed or searched.
let stack: Stack;
let a: SignedUp;
const MARCH = Date.UTC(2026, 2, 14, 9, 30);
const JUNE = Date.UTC(2026, 5, 2, 18, 0);
const ids: Record<string, string> = {};
beforeAll(async () => {
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  await subscribeToMemoryEvents(stack, a.org.id);
  const march = await stack.api.post('/api/memories', {
    token: a.token,
    body: { content: 'Dana moved to Lisbon for work', occurred_at: MARCH },
  });
  expect(march.status).toBe(201);
  ids.march = march.body.id;
  const batch = await stack.api.post('/api/memories/batch', {
    token: a.token,
    body: {
      memories: [
        { content: 'Dana started learning Portuguese in Lisbon', occurred_at: JUNE },
        { content: 'Dana likes the trams of Lisbon' },
      ],
    },
  });
  expect(batch.body.created).toBe(2);
  [ids.june, ids.today] = batch.body.results.map((r: { id: string }) => r.id);
});
afterAll(async () => stack?.close());

const idsOf = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

describe('event time (occurred_at)', () => {
  it("is the caller's when given and the save's time when not, on the row and in memory.saved", async () => {
    const march = (await stack.api.get(`/api/memories/${ids.march}`, { token: a.token })).body;
    expect(march.occurred_at).toBe(MARCH);
    expect(march.created_at).toBeGreaterThan(JUNE);
    const today = (await stack.api.get(`/api/memories/${ids.today}`, { token: a.token })).body;
    expect(today.occurred_at).toBe(today.created_at);
    const events = await query(
      stack.orm.em.fork(),
      sql<{ data: { id: string; occurred_at: number } }>`select data from events where org_id = ${a.org.id} and type = 'memory.saved'`,
    );
    expect(events.find((e) => e.data.id === ids.june)!.data.occurred_at).toBe(JUNE);
  });

  it('filters lists (query and body), search, bulk search and exports', async () => {
    const window = { occurred_after: MARCH - 1, occurred_before: JUNE - 1 };
    const legacy = await stack.api.get(`/api/memories?occurred_after=${window.occurred_after}&occurred_before=${window.occurred_before}`, {
      token: a.token,
    });
    expect(idsOf(legacy.body)).toEqual([ids.march]);
    const listed = await stack.api.post('/api/memories/list', { token: a.token, body: { occurred_before: JUNE } });
    expect(listed.body.total).toBe(2);
    expect(idsOf(listed.body.memories)).toEqual([ids.march, ids.june].sort());
    const searched = await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'Dana Lisbon', occurred_after: JUNE } });
    expect(idsOf(searched.body.hits)).toEqual([ids.june, ids.today].sort());
    const bulk = await stack.api.post('/api/memories/search/bulk', { token: a.token, body: { queries: ['Lisbon'], ...window } });
    expect(idsOf(bulk.body.results[0].hits)).toEqual([ids.march]);

    for (const format of ['ndjson', 'csv'] as const) {
      const started = await stack.api.post('/api/memories/exports', {
        token: a.token,
        body: { format, filters: { occurred_before: JUNE } },
      });
      expect(started.status).toBe(202);
      const done = await eventually(async () => {
        const res = await stack.api.get(`/api/memories/exports/${started.body.id}`, { token: a.token });
        return res.body.status === 'completed' && res.body;
      });
      const lines = done.payload.trimEnd().split('\n');
      if (format === 'ndjson') {
        const rows = lines.map((l: string) => JSON.parse(l));
        expect(rows.map((r: { occurred_at: number }) => r.occurred_at).sort()).toEqual([MARCH, JUNE]);
      } else {
        expect(lines[0]!.split(',').at(-1)).toBe('occurred_at');
        expect(
          lines
            .slice(1)
            .map((l: string) => Number(l.split(',').at(-1)))
            .sort(),
        ).toEqual([MARCH, JUNE]);
      }
    }
  });

  it('changes on update, alone or in a batch', async () => {
    const patched = await stack.api.patch(`/api/memories/${ids.today}`, { token: a.token, body: { occurred_at: MARCH + 1 } });
    expect(patched.status).toBe(200);
    expect(patched.body.occurred_at).toBe(MARCH + 1);
    const batch = await stack.api.put('/api/memories/batch', {
      token: a.token,
      body: { updates: [{ id: ids.today, occurred_at: JUNE + 1, tags: ['t'] }] },
    });
    expect(batch.body.results[0]).toMatchObject({ occurred_at: JUNE + 1, tags: ['t'] });
    // Another field's edit keeps it.
    const edited = await stack.api.patch(`/api/memories/${ids.today}`, {
      token: a.token,
      body: { content: 'Dana loves the trams of Lisbon' },
    });
    expect(edited.body.occurred_at).toBe(JUNE + 1);
  });

  it('stands at created_at for a memory saved before event time was kept', async () => {
    const old = await stack.api.post('/api/memories', {
      token: a.token,
      body: { content: 'An old note about Lisbon', occurred_at: MARCH },
    });
    await query(stack.orm.em.fork(), sql`update memories set occurred_at = null where org_id = ${a.org.id} and id = ${old.body.id}`);
    const read = (await stack.api.get(`/api/memories/${old.body.id}`, { token: a.token })).body;
    expect(read.occurred_at).toBe(read.created_at);
    const listed = await stack.api.post('/api/memories/list', {
      token: a.token,
      body: { occurred_after: read.created_at, occurred_before: read.created_at },
    });
    expect(idsOf(listed.body.memories)).toContain(old.body.id);
  });

  it('refuses values out of range or not integers, naming the field, in a body, a batch item and a query', async () => {
    for (const occurred_at of [-1, 253_402_300_800_000, 1.5, '2026-03-14', null]) {
      const res = await stack.api.post('/api/memories', { token: a.token, body: { content: 'x', occurred_at } });
      expect(res.status, String(occurred_at)).toBe(400);
      expect(res.body.issues.map((i: { path: string }) => i.path)).toContain('body.occurred_at');
    }
    const batch = await stack.api.post('/api/memories/batch', {
      token: a.token,
      body: { memories: [{ content: 'fine' }, { content: 'x', occurred_at: -5 }] },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.created).toBe(1);
    expect(batch.body.failed).toMatchObject([{ index: 1, status: 400, issues: [{ path: 'memories.1.occurred_at' }] }]);
    const listed = await stack.api.get('/api/memories?occurred_after=yesterday', { token: a.token });
    expect(listed.status).toBe(400);
    expect(JSON.stringify(listed.body)).toContain('occurred_after');
  });
});
