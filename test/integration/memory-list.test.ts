import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { signUp, startStack, subscribeToMemoryEvents, type SignedUp, type Stack } from '../support/stack.ts';

let stack: Stack;
let a: SignedUp;
const created: {
  id: string;
  created_at: number;
  updated_at: number;
  namespace: string;
  tags: string[];
  metadata: Record<string, unknown>;
}[] = [];
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  await subscribeToMemoryEvents(stack, a.org.id);
  for (let i = 0; i < 30; i++) {
    const res = await stack.api.post('/api/memories', {
      token: a.token,
      body: {
        content: `note ${i}`,
        namespace: i % 3 === 0 ? 'alpha' : 'beta',
        tags: i % 2 ? ['odd', 'x'] : ['even'],
        metadata: { i, group: { g: i % 5 } },
      },
    });
    created.push(res.body);
  }
  // Touch a few so that update order differs from creation order.
  for (const i of [3, 7]) {
    const res = await stack.api.patch(`/api/memories/${created[i]!.id}`, { token: a.token, body: { metadata: { touched: true } } });
    created[i] = res.body;
  }
});
afterAll(async () => stack?.close());

const list = (body: unknown) => stack.api.post('/api/memories/list', { token: a.token, body });

describe('POST /api/memories/list', () => {
  it('defaults to 50 rows, offset 0, updated_desc, with total', async () => {
    const res = await list({});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ limit: 50, offset: 0, total: 30 });
    expect(res.body.memories.slice(0, 2).map((m: { id: string }) => m.id)).toEqual([created[7]!.id, created[3]!.id]);
  });

  it('orders by each documented order', async () => {
    const byCreated = [...created].sort((x, y) => y.created_at - x.created_at || (y.id > x.id ? 1 : -1)).map((m) => m.id);
    expect((await list({ order: 'newest' })).body.memories.map((m: { id: string }) => m.id)).toEqual(byCreated);
    expect((await list({ order: 'oldest' })).body.memories.map((m: { id: string }) => m.id)).toEqual([...byCreated].reverse());
    const asc = (await list({ order: 'updated_asc' })).body.memories.map((m: { id: string }) => m.id);
    expect(asc.slice(-2)).toEqual([created[3]!.id, created[7]!.id]);
  });

  it('filters by namespace, tags (all of), metadata containment and time, with matching totals', async () => {
    const alpha = await list({ namespace: 'alpha' });
    expect(alpha.body.total).toBe(10);
    expect(alpha.body.memories.every((m: { namespace: string }) => m.namespace === 'alpha')).toBe(true);
    const tagged = await list({ tags: ['odd', 'x'] });
    expect(tagged.body.total).toBe(15);
    expect((await list({ tags: ['odd', 'even'] })).body.total).toBe(0);
    const meta = await list({ metadata_filter: { group: { g: 2 } } });
    expect(meta.body.total).toBe(6);
    expect(meta.body.memories.every((m: { metadata: { group: { g: number } } }) => m.metadata.group.g === 2)).toBe(true);
    const pivot = created[10]!.created_at;
    const after = await list({ created_after: pivot, order: 'oldest' });
    expect(after.body.memories[0].id).toBe(created[10]!.id);
    expect(after.body.total).toBe(created.filter((m) => m.created_at >= pivot).length);
    const before = await list({ created_before: pivot });
    expect(before.body.total).toBe(created.filter((m) => m.created_at <= pivot).length);
    const touched = await list({ updated_after: created[3]!.updated_at });
    expect(touched.body.memories.map((m: { id: string }) => m.id).sort()).toEqual([created[3]!.id, created[7]!.id].sort());
    expect((await list({ updated_before: created[3]!.updated_at - 1 })).body.total).toBe(28);
    const combined = await list({ namespace: 'beta', tags: ['even'], metadata_filter: { group: { g: 4 } } });
    expect(combined.body.total).toBe(
      created.filter((m) => m.namespace === 'beta' && m.tags.includes('even') && (m.metadata.group as { g: number }).g === 4).length,
    );
    expect((await list({ namespace: 'nope' })).body).toMatchObject({ memories: [], total: 0 });
  });

  it('skips the count of a filtered list in an org of more than 100,000 memories (total null), never the page', async () => {
    const b = await signUp(stack.api);
    for (let i = 0; i < 3; i++)
      await stack.api.post('/api/memories', { token: b.token, body: { content: `big org note ${i}`, metadata: { i } } });
    const filtered = { metadata_filter: { i: 1 } };
    const listB = (body: Record<string, unknown>) => stack.api.post('/api/memories/list', { token: b.token, body });
    expect((await listB(filtered)).body.total).toBe(1);
    // The org's live-memory counter says 100,003, as if it held that many.
    await query(
      stack.orm.em.fork(),
      sql`insert into counters (org_id, scope_id, name, shard, value) values (${b.org.id}, ${b.org.id}, 'memories', 99, 100000)`,
    );
    const big = await listB(filtered);
    expect(big.body.total).toBeNull();
    expect(big.body.memories.map((m: { content: string }) => m.content)).toEqual(['big org note 1']);
    expect((await listB({})).body.total).toBe(100_003);
  });

  it('finds a filtered page of a large org among its first rows in the order asked, the same page as the general query', async () => {
    const c = await signUp(stack.api);
    const mine: { id: string; created_at: number; updated_at: number; tags: string[]; metadata: { k: string } }[] = [];
    for (let i = 0; i < 24; i++) {
      const res = await stack.api.post('/api/memories', {
        token: c.token,
        body: { content: `window note ${i}`, tags: i % 3 ? ['t'] : ['u'], metadata: { k: i % 2 ? 'odd' : 'even' } },
      });
      mine.push(res.body);
    }
    const listC = (body: Record<string, unknown>) => stack.api.post('/api/memories/list', { token: c.token, body });
    const cases: [Record<string, unknown>, (m: (typeof mine)[number]) => boolean][] = [
      [{ metadata_filter: { k: 'odd' }, limit: 4, order: 'newest' }, (m) => m.metadata.k === 'odd'],
      [{ metadata_filter: { k: 'even' }, limit: 3, offset: 2, order: 'oldest' }, (m) => m.metadata.k === 'even'],
      [{ tags: ['u'], limit: 5, order: 'updated_desc' }, (m) => m.tags.includes('u')],
      // More rows asked than match: the windows hold no full page, so the general query answers.
      [{ tags: ['u'], metadata_filter: { k: 'odd' }, limit: 50, order: 'newest' }, (m) => m.tags.includes('u') && m.metadata.k === 'odd'],
    ];
    const expected = (filter: Record<string, unknown>, keep: (m: (typeof mine)[number]) => boolean) => {
      const order = filter.order as string;
      const key = (m: (typeof mine)[number]) => (order.startsWith('updated') ? m.updated_at : m.created_at);
      const sign = order === 'oldest' ? 1 : -1;
      const sorted = mine.filter(keep).sort((x, y) => sign * (key(x) - key(y) || (x.id < y.id ? -1 : 1)));
      const offset = (filter.offset as number | undefined) ?? 0;
      return sorted.slice(offset, offset + (filter.limit as number)).map((m) => m.id);
    };
    const before = [];
    for (const [filter, keep] of cases) {
      const res = await listC(filter);
      expect(res.body.memories.map((m: { id: string }) => m.id)).toEqual(expected(filter, keep));
      before.push(res.body.memories);
    }
    // The org's counter now says 5,024 memories, so its filtered lists look in windows first.
    await query(
      stack.orm.em.fork(),
      sql`insert into counters (org_id, scope_id, name, shard, value) values (${c.org.id}, ${c.org.id}, 'memories', 99, 5000)`,
    );
    for (const [i, [filter]] of cases.entries()) expect((await listC(filter)).body.memories).toEqual(before[i]);
  });

  it('pages with limit and offset', async () => {
    const p1 = await list({ limit: 7, order: 'newest' });
    const p2 = await list({ limit: 7, offset: 7, order: 'newest' });
    expect(p1.body.memories).toHaveLength(7);
    expect(new Set([...p1.body.memories, ...p2.body.memories].map((m: { id: string }) => m.id)).size).toBe(14);
    expect(p2.body).toMatchObject({ limit: 7, offset: 7, total: 30 });
  });

  it('rejects values outside the documented ranges', async () => {
    for (const body of [
      { limit: 0 },
      { limit: 501 },
      { offset: -1 },
      { offset: 100_001 },
      { order: 'random' },
      { tags: 'x' },
      { metadata_filter: 'x' },
      { created_after: 'today' },
    ]) {
      const res = await list(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await list({ limit: 500, offset: 100_000 })).status).toBe(200);
  });

  it('is a read: not counted by the write limit', async () => {
    const limited = await startStack({
      relay: false,
      worker: false,
      env: { WRITE_RATE_LIMIT_PER_MINUTE: '1' },
      databaseUrl: stack.config.DATABASE_URL,
    });
    try {
      for (let i = 0; i < 5; i++) {
        expect((await limited.api.post('/api/memories/list', { token: a.token, body: {} })).status).toBe(200);
        expect((await limited.api.post('/api/memories/search', { token: a.token, body: { query: 'note' } })).status).toBe(200);
      }
      expect((await limited.api.post('/api/memories', { token: a.token, body: { content: 'one' } })).status).toBe(201);
      expect((await limited.api.post('/api/memories', { token: a.token, body: { content: 'two' } })).status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('GET /api/memories (legacy)', () => {
  it('returns a plain array with query-string filters', async () => {
    const res = await stack.api.get(
      `/api/memories?namespace=alpha&limit=3&order=oldest&metadata_filter=${encodeURIComponent('{"group":{"g":0}}')}`,
      { token: a.token },
    );
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(
      res.body.every((m: { namespace: string; metadata: { group: { g: number } } }) => m.namespace === 'alpha' && m.metadata.group.g === 0),
    ).toBe(true);
    expect((await stack.api.get('/api/memories?metadata_filter=nope', { token: a.token })).status).toBe(400);
    expect((await stack.api.get('/api/memories?limit=501', { token: a.token })).status).toBe(400);
  });

  it('filters by tags given as repeated parameters (with or without brackets), all of them required', async () => {
    const ids = (res: { body: { id: string }[] }) => res.body.map((m) => m.id).sort();
    const odd = created
      .filter((_, i) => i % 2)
      .map((m) => m.id)
      .sort();
    expect(ids(await stack.api.get('/api/memories?tags=odd&limit=500', { token: a.token }))).toEqual(odd);
    expect(ids(await stack.api.get('/api/memories?tags=odd&tags=x&limit=500', { token: a.token }))).toEqual(odd);
    expect((await stack.api.get('/api/memories?tags=odd&tags=even', { token: a.token })).body).toEqual([]);
    // With brackets, as axios and PHP write a list: the same filter, never dropped as an unknown parameter.
    expect(ids(await stack.api.get('/api/memories?tags[]=odd&tags[]=x&limit=500', { token: a.token }))).toEqual(odd);
    expect(ids(await stack.api.get(`/api/memories?${encodeURIComponent('tags[]')}=odd&limit=500`, { token: a.token }))).toEqual(odd);
    expect((await stack.api.get('/api/memories?tags=odd&tags[]=even', { token: a.token })).body).toEqual([]);
    const searched = await stack.api.get('/api/memories?q=note&tags=even&limit=500', { token: a.token });
    expect(ids(searched)).toEqual(
      created
        .filter((_, i) => i % 2 === 0)
        .map((m) => m.id)
        .sort(),
    );
    const empty = await stack.api.get('/api/memories?tags=', { token: a.token });
    expect(empty.status).toBe(400);
    expect(empty.body.issues[0].path).toBe('query.tags.0');
  });
});

describe('PUT /api/memories/batch', () => {
  it('applies good rows, reports bad ones, one memory.updated per updated row', async () => {
    const ids = created.slice(20, 23).map((m) => m.id);
    const missing = crypto.randomUUID();
    const res = await stack.api.put('/api/memories/batch', {
      token: a.token,
      body: {
        updates: [
          { id: ids[0], tags: ['batched'] },
          { id: missing, tags: ['x'] },
          { id: ids[1], content: 'batched content' },
          { id: ids[2] },
          { id: 'not-a-uuid', tags: [] },
          { tags: ['no id'] },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.updated).toBe(2);
    expect(res.body.results.map((m: { id: string }) => m.id)).toEqual([ids[0], ids[1]]);
    expect(res.body.failed).toEqual(
      expect.arrayContaining([
        { id: missing, error: 'not found', message: `memory ${missing} not found` },
        { id: ids[2], error: 'no patchable fields supplied', message: expect.stringMatching(/^send at least one of /) },
        expect.objectContaining({ id: 'not-a-uuid', error: 'validation_failed', message: expect.stringMatching(/^updates\.4\.id: /) }),
        expect.objectContaining({ id: null, error: 'validation_failed', message: expect.stringMatching(/^updates\.5\.id: /) }),
      ]),
    );
    expect(res.body.failed).toHaveLength(4);
    const events = await stack.orm.em
      .fork()
      .getConnection()
      .execute(
        `select count(*)::int as n from events where type = 'memory.updated' and data->>'id' in ('${ids[0]}', '${ids[1]}', '${ids[2]}')`,
      );
    expect(events[0]!.n).toBe(2);
  });

  it('costs one write slot whatever its size, and caps at 200 rows', async () => {
    const limited = await startStack({
      relay: false,
      worker: false,
      env: { WRITE_RATE_LIMIT_PER_MINUTE: '2' },
      databaseUrl: stack.config.DATABASE_URL,
    });
    try {
      const b = await signUp(stack.api);
      const m = (await limited.api.post('/api/memories', { token: b.token, body: { content: 'x' } })).body;
      const updates = Array.from({ length: 200 }, () => ({ id: m.id, tags: ['t'] }));
      const res = await limited.api.put('/api/memories/batch', { token: b.token, body: { updates } });
      expect(res.status).toBe(200);
      expect(res.body.updated).toBe(200);
      expect((await limited.api.put('/api/memories/batch', { token: b.token, body: { updates } })).status).toBe(429);
      const tooMany = await stack.api.put('/api/memories/batch', { token: b.token, body: { updates: [...updates, updates[0]] } });
      expect(tooMany.status).toBe(400);
      expect((await stack.api.put('/api/memories/batch', { token: b.token, body: { updates: [] } })).status).toBe(400);
      expect((await stack.api.put('/api/memories/batch', { token: b.token, body: {} })).status).toBe(400);
    } finally {
      await limited.close();
    }
  });
});

describe('entity filter', () => {
  it('lists only memories linked to the entity, within the org', async () => {
    const em = stack.orm.em.fork();
    const entityId = crypto.randomUUID();
    await query(
      em,
      sql`insert into entities (id, org_id, display_name, normalized_name, entity_type, first_seen_at, last_seen_at, created_at, updated_at)
                        values (${entityId}, ${a.org.id}, 'Ada', 'ada', 'person', now(), now(), now(), now())`,
    );
    const linked = [created[1]!.id, created[4]!.id];
    for (const id of linked) {
      await query(
        em,
        sql`insert into memory_entities (entity_id, memory_id, org_id, linked_via, created_at)
          values (${entityId}, ${id}, ${a.org.id}, 'extraction', now())`,
      );
    }
    const res = await list({ entity: entityId });
    expect(res.body.total).toBe(2);
    expect(res.body.memories.map((m: { id: string }) => m.id).sort()).toEqual([...linked].sort());
    expect((await list({ entity: entityId, namespace: created[1]!.namespace })).body.total).toBe(
      linked.filter((id) => created.find((m) => m.id === id)!.namespace === created[1]!.namespace).length,
    );
    const legacy = await stack.api.get(`/api/memories?entity=${entityId}`, { token: a.token });
    expect(legacy.body.map((m: { id: string }) => m.id).sort()).toEqual([...linked].sort());
    const b = await signUp(stack.api);
    expect((await stack.api.post('/api/memories/list', { token: b.token, body: { entity: entityId } })).body.total).toBe(0);
    expect((await list({ entity: 'not-a-uuid' })).status).toBe(400);
    expect((await list({ entity: crypto.randomUUID() })).body.total).toBe(0);
  });
});
