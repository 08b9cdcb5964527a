import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordMentions, unlinkExtraction, type Mention } from '../../domain/entities/mentions.ts';
import { query, sql } from '../../domain/sql.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  // Signup runs a workflow, so the worker is needed; free orgs get no background extraction to race with.
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

interface EntityJson {
  id: string;
  display_name: string;
  entity_type: string;
  aliases: string[];
  mention_count: number;
  first_seen_at: number;
  last_seen_at: number;
  metadata: Record<string, unknown>;
  memories?: { id: string; content: string; namespace: string; created_at: number; linked_via: string }[];
}

const save = async (content: string, who: SignedUp = a, namespace = 'entities'): Promise<string> => {
  const res = await stack.api.post('/api/memories', { token: who.token, body: { content, namespace } });
  expect(res.status).toBe(201);
  return res.body.id;
};
const record = (memoryId: string, mentions: Mention[], seenAt = new Date(), who: SignedUp = a) =>
  recordMentions(stack.orm.em.fork(), who.org.id, memoryId, mentions, seenAt);
const entity = async (id: string, who: SignedUp = a, suffix = ''): Promise<EntityJson> => {
  const res = await stack.api.get(`/api/entities/${id}${suffix}`, { token: who.token });
  expect(res.status).toBe(200);
  return res.body;
};
const list = (qs: string, who: SignedUp = a) => stack.api.get(`/api/entities${qs}`, { token: who.token });
const linkCount = async (memoryId: string) =>
  (await query(stack.orm.em.fork(), sql<{ n: number }>`select count(*)::int as n from memory_entities where memory_id = ${memoryId}`))[0]!
    .n;

describe('recordMentions', () => {
  it('gives one entity to a name that one extraction writes as a name and a concurrent one as an alias', async () => {
    const b = await signUp(stack.api);
    const pairs = 8;
    const memories = await Promise.all(Array.from({ length: pairs * 2 }, (_, i) => save(`race ${i}`, b)));
    const outcomes = await Promise.all(
      Array.from({ length: pairs }, (_, i) => [
        record(memories[2 * i]!, [{ name: `Racer ${i}`, type: 'org', aliases: [`Racer ${i} Incorporated`] }], new Date(), b),
        record(memories[2 * i + 1]!, [{ name: `Racer ${i} Incorporated`, type: 'org' }], new Date(), b),
      ]).flat(),
    );
    for (let i = 0; i < pairs; i++) {
      const [byName, byAlias] = [outcomes[2 * i]!, outcomes[2 * i + 1]!];
      expect(byAlias.entityIds, `pair ${i}`).toEqual(byName.entityIds);
      expect(byName.created + byAlias.created).toBe(1);
      const rows = await query(
        stack.orm.em.fork(),
        sql<{
          n: number;
        }>`select count(*)::int as n from entities
          where org_id = ${b.org.id} and (normalized_name like ${`racer ${i}%`} or ${`racer ${i} incorporated`} = any(normalized_aliases))`,
      );
      expect(rows[0]!.n).toBe(1);
      expect((await entity(byName.entityIds[0]!, b)).mention_count).toBe(2);
    }
  });

  it('creates an entity once and merges later mentions by normalized name', async () => {
    const [m1, m2, m3] = [await save('pg one'), await save('pg two'), await save('pg three')];
    const t0 = new Date('2024-01-01T00:00:00.000Z');
    const t1 = new Date('2024-02-01T00:00:00.000Z');
    const t2 = new Date('2024-03-01T00:00:00.000Z');
    const first = await record(m1, [{ name: 'The  PostgreSQL ', type: 'Technology' }], t1);
    expect(first).toMatchObject({ created: 1, linked: 1 });
    expect(await record(m2, [{ name: 'postgresql', type: 'product' }], t0)).toEqual({ entityIds: first.entityIds, created: 0, linked: 1 });
    expect(await record(m3, [{ name: '"PostgreSQL".', type: 'x' }], t2)).toEqual({ entityIds: first.entityIds, created: 0, linked: 1 });
    const e = await entity(first.entityIds[0]!);
    expect(e).toMatchObject({
      display_name: 'The  PostgreSQL',
      entity_type: 'technology',
      aliases: [],
      mention_count: 3,
      first_seen_at: t0.getTime(),
      last_seen_at: t2.getTime(),
      metadata: {},
    });
  });

  it('merges by alias both ways and adds the new names as aliases', async () => {
    const [m1, m2, m3] = [await save('k one'), await save('k two'), await save('k three')];
    const {
      entityIds: [id],
    } = await record(m1, [{ name: 'Kubernetes', type: 'tool', aliases: [' k8s ', 'K8S', 'kubernetes'] }]);
    expect((await entity(id!)).aliases).toEqual(['k8s']);
    expect((await record(m2, [{ name: 'K8s', type: 'tool' }])).entityIds).toEqual([id]);
    expect((await record(m3, [{ name: 'Kube', type: 'tool', aliases: ['The Kubernetes', 'kates'] }])).entityIds).toEqual([id]);
    const e = await entity(id!);
    expect(e.display_name).toBe('Kubernetes');
    expect(e.aliases).toEqual(['k8s', 'Kube', 'kates']);
    expect(e.mention_count).toBe(3);
    const [row] = await query(
      stack.orm.em.fork(),
      sql<{ normalized_aliases: string[] }>`select normalized_aliases from entities where id = ${id}`,
    );
    expect(row!.normalized_aliases).toEqual(['k8s', 'kube', 'kates']);
  });

  it('is idempotent per memory and dedupes mentions within a call', async () => {
    const m = await save('redis and friends');
    const mentions = [
      { name: 'Redis', type: 'db' },
      { name: 'the redis', type: 'db', aliases: ['RDS'] },
      { name: 'Valkey', type: 'db' },
    ];
    const first = await record(m, mentions, new Date('2024-05-01T00:00:00Z'));
    expect(first).toMatchObject({ created: 2, linked: 2 });
    const before = await Promise.all(first.entityIds.map((id) => entity(id)));
    expect(before.find((e) => e.display_name === 'Redis')).toMatchObject({ mention_count: 1, aliases: ['RDS'] });
    const again = await record(m, [...mentions, { name: 'Redis', type: 'db', aliases: ['new alias'] }], new Date('2025-05-01T00:00:00Z'));
    expect(again).toEqual({ entityIds: first.entityIds, created: 0, linked: 0 });
    expect(await Promise.all(first.entityIds.map((id) => entity(id)))).toEqual(before);
    expect(await linkCount(m)).toBe(2);
    const untyped = await record(await save('untyped'), [
      { name: 'Mystery', type: '  ' },
      { name: ' ... ', type: 'x' },
    ]);
    expect(untyped.entityIds).toHaveLength(1);
    expect((await entity(untyped.entityIds[0]!)).entity_type).toBe('other');
  });

  it('creates one entity when memories mentioning a new name are recorded concurrently', async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, (_, i) => save(`concurrent ${i}`)));
    const names = ['Alpha Corp', 'Beta Corp', 'Gamma Corp'];
    const outcomes = await Promise.all(
      ids.map((id, i) =>
        record(
          id,
          (i % 2 ? [...names].reverse() : names).map((name) => ({ name, type: 'org' })),
        ),
      ),
    );
    expect(outcomes.reduce((n, o) => n + o.created, 0)).toBe(3);
    expect(outcomes.every((o) => o.linked === 3)).toBe(true);
    const rows = (await list('?q=corp')).body.entities as EntityJson[];
    expect(rows.map((e) => [e.display_name, e.mention_count]).sort()).toEqual(names.map((n) => [n, 6]));
  });

  it('unlinks extraction links and decrements counts; records nothing for a missing or foreign memory', async () => {
    const m = await save('unlink me');
    const { entityIds } = await record(m, [{ name: 'Unlinkable', type: 'thing' }]);
    const other = await save('still linked');
    await record(other, [{ name: 'Unlinkable', type: 'thing' }]);
    expect((await entity(entityIds[0]!)).mention_count).toBe(2);
    expect(await unlinkExtraction(stack.orm.em.fork(), a.org.id, m)).toEqual({ unlinked: 1 });
    expect(await unlinkExtraction(stack.orm.em.fork(), a.org.id, m)).toEqual({ unlinked: 0 });
    expect((await entity(entityIds[0]!)).mention_count).toBe(1);
    expect(await linkCount(m)).toBe(0);
    expect(await record(m, [{ name: 'Unlinkable', type: 'thing' }])).toMatchObject({ created: 0, linked: 1 });

    const b = await signUp(stack.api);
    expect(await record(m, [{ name: 'Intruder', type: 'thing' }], new Date(), b)).toEqual({ entityIds: [], created: 0, linked: 0 });
    expect(await unlinkExtraction(stack.orm.em.fork(), b.org.id, m)).toEqual({ unlinked: 0 });
    expect(await linkCount(m)).toBe(1);
  });
});

describe('GET /api/entities', () => {
  it('filters by q (name or alias) and entity_type, orders by mentions then recency, pages', async () => {
    const b = await signUp(stack.api);
    const ms = await Promise.all([1, 2, 3, 4].map((i) => save(`list ${i}`, b)));
    const at = (d: number) => new Date(Date.UTC(2024, 0, d));
    for (const m of ms) await record(m, [{ name: 'Ubiquitous', type: 'Concept' }], at(1), b);
    await record(
      ms[0]!,
      [
        { name: 'Old Friend', type: 'person' },
        { name: 'New Friend', type: 'person', aliases: ['100%_match'] },
      ],
      at(2),
      b,
    );
    await record(
      ms[1]!,
      [
        { name: 'Old Friend', type: 'person' },
        { name: 'New Friend', type: 'person' },
      ],
      at(3),
      b,
    );
    await record(ms[2]!, [{ name: 'New Friend', type: 'person' }], at(5), b);
    await record(ms[3]!, [{ name: 'Old Friend', type: 'person' }], at(4), b);
    const names = (res: { body: { entities: EntityJson[] } }) => res.body.entities.map((e) => e.display_name);
    expect(names(await list('', b))).toEqual(['Ubiquitous', 'New Friend', 'Old Friend']);
    expect(names(await list('?q=FRIEND', b))).toEqual(['New Friend', 'Old Friend']);
    expect(names(await list('?q=0%25_m', b))).toEqual(['New Friend']);
    expect(names(await list('?q=%25', b))).toEqual(['New Friend']);
    expect(names(await list('?entity_type=CONCEPT', b))).toEqual(['Ubiquitous']);
    expect(names(await list('?entity_type=person&q=old', b))).toEqual(['Old Friend']);
    expect(names(await list('?limit=1&offset=1', b))).toEqual(['New Friend']);
    expect(names(await list('?offset=3', b))).toEqual([]);
    const first = (await list('?limit=1', b)).body.entities[0] as EntityJson;
    expect(first).toEqual({
      id: expect.any(String),
      display_name: 'Ubiquitous',
      entity_type: 'concept',
      aliases: [],
      mention_count: 4,
      first_seen_at: at(1).getTime(),
      last_seen_at: at(1).getTime(),
      metadata: {},
    });
    for (const bad of ['?limit=0', '?limit=501', '?offset=-1', '?offset=100001', '?limit=abc', `?q=${'x'.repeat(201)}`]) {
      expect((await list(bad, b)).status, bad).toBe(400);
    }
    expect(names(await list('?q=friend', a))).not.toContain('Old Friend');
  });
});

describe('GET /api/entities/:id', () => {
  it('includes up to 100 linked memories, newest first, only when asked', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 102; i++) ids.push(await save(`linked memory ${i}`, a, i % 2 ? 'odd' : 'even'));
    let entityId = '';
    for (const id of ids) entityId = (await record(id, [{ name: 'Hundred', type: 'test' }])).entityIds[0]!;
    const plain = await entity(entityId);
    expect(plain.memories).toBeUndefined();
    expect((await entity(entityId, a, '?include_memories=0')).memories).toBeUndefined();
    for (const flag of ['1', 'true']) {
      const full = await entity(entityId, a, `?include_memories=${flag}`);
      expect(full.mention_count).toBe(102);
      expect(full.memories).toHaveLength(100);
      expect(full.memories!.map((m) => m.id)).toEqual(ids.slice(2).reverse());
      expect(full.memories![0]).toEqual({
        id: ids[101],
        content: 'linked memory 101',
        namespace: 'odd',
        created_at: expect.any(Number),
        linked_via: 'extraction',
      });
    }
    expect((await stack.api.get(`/api/entities/${entityId}?include_memories=yes`, { token: a.token })).status).toBe(400);
    expect((await stack.api.get('/api/entities/not-a-uuid', { token: a.token })).status).toBe(400);
    expect((await stack.api.get('/api/entities/00000000-0000-4000-8000-000000000000', { token: a.token })).status).toBe(404);
  });
});

describe('PATCH /api/entities/:id', () => {
  it('replaces aliases, merges metadata, renames, and refuses a taken name or an empty body', async () => {
    const m = await save('patch target');
    const {
      entityIds: [id, otherId],
    } = await record(m, [
      { name: 'Patchable', type: 'thing', aliases: ['p1'] },
      { name: 'Taken Name', type: 'thing' },
    ]);
    const patch = (body: unknown, who: SignedUp = a) => stack.api.patch(`/api/entities/${id}`, { token: who.token, body });
    let res = await patch({ aliases: ['P2', 'p2', 'P3'], metadata: { a: 1, b: { c: 2 } }, entity_type: 'Project' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id,
      display_name: 'Patchable',
      entity_type: 'project',
      aliases: ['P2', 'P3'],
      metadata: { a: 1, b: { c: 2 } },
      mention_count: 1,
    });
    res = await patch({ metadata: { a: null, d: 'x' } });
    expect(res.body.metadata).toEqual({ b: { c: 2 }, d: 'x' });
    expect(res.body.aliases).toEqual(['P2', 'P3']);
    res = await patch({ display_name: 'Renamed Thing' });
    expect(res.body).toMatchObject({ display_name: 'Renamed Thing', aliases: ['P2', 'P3'], metadata: { b: { c: 2 }, d: 'x' } });
    // Extraction now merges by the new name and the new aliases, no longer by the old ones.
    const later = await save('later');
    expect((await record(later, [{ name: 'the renamed thing', type: 'thing' }])).entityIds).toEqual([id]);
    expect((await record(await save('later 2'), [{ name: 'p3', type: 'thing' }])).entityIds).toEqual([id]);
    expect((await record(await save('later 3'), [{ name: 'p1', type: 'thing' }])).entityIds).not.toEqual([id]);

    const clash = await patch({ display_name: 'THE taken name' });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toBe('entity_name_taken');
    expect((await entity(otherId!)).display_name).toBe('Taken Name');
    expect((await patch({ aliases: [] })).body.aliases).toEqual([]);

    const empty = await patch({});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('no patchable fields supplied');
    for (const bad of [
      { display_name: '' },
      { display_name: 'x'.repeat(201) },
      { entity_type: 'x'.repeat(51) },
      { aliases: Array.from({ length: 51 }, (_, i) => `a${i}`) },
      { aliases: 'p' },
      { metadata: [] },
      { display_name: '!!!' },
    ]) {
      expect((await patch(bad)).status, JSON.stringify(bad)).toBe(400);
    }

    const events = (await stack.api.get(`/api/events?action=entity.&target=${id}`, { token: a.token })).body.events as {
      action: string;
      actor_user_id: string;
    }[];
    expect(events.length).toBeGreaterThanOrEqual(4);
    expect(events.every((e) => e.action === 'entity.update' && e.actor_user_id === a.user.id)).toBe(true);
  });
});

describe('DELETE /api/entities/:id and the entity filter of memory lists', () => {
  it('lists only linked memories, and deleting removes the links but keeps the memories', async () => {
    const [m1, m2, m3] = [await save('del one'), await save('del two'), await save('del three')];
    const {
      entityIds: [id],
    } = await record(m1, [{ name: 'Doomed Entity', type: 'thing' }]);
    await record(m2, [
      { name: 'doomed entity', type: 'thing' },
      { name: 'Survivor', type: 'thing' },
    ]);
    await record(m3, [{ name: 'Survivor', type: 'thing' }]);
    const listed = await stack.api.post('/api/memories/list', { token: a.token, body: { entity: id } });
    expect(listed.status).toBe(200);
    expect(listed.body.memories.map((m: { id: string }) => m.id).sort()).toEqual([m1, m2].sort());
    expect(listed.body.total).toBe(2);
    const legacy = await stack.api.get(`/api/memories?entity=${id}`, { token: a.token });
    expect(legacy.status).toBe(200);
    expect(legacy.body.map((m: { id: string }) => m.id).sort()).toEqual([m1, m2].sort());

    const b = await signUp(stack.api);
    expect((await stack.api.post('/api/memories/list', { token: b.token, body: { entity: id } })).body.memories).toEqual([]);
    expect((await stack.api.delete(`/api/entities/${id}`, { token: b.token })).status).toBe(404);

    const res = await stack.api.delete(`/api/entities/${id}`, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect((await stack.api.get(`/api/entities/${id}`, { token: a.token })).status).toBe(404);
    expect((await stack.api.delete(`/api/entities/${id}`, { token: a.token })).status).toBe(404);
    for (const m of [m1, m2, m3]) expect((await stack.api.get(`/api/memories/${m}`, { token: a.token })).status).toBe(200);
    expect(await linkCount(m1)).toBe(0);
    expect(await linkCount(m2)).toBe(1);
    expect((await stack.api.post('/api/memories/list', { token: a.token, body: { entity: id } })).body.memories).toEqual([]);
    const events = (await stack.api.get(`/api/events?action=entity.delete&target=${id}`, { token: a.token })).body.events;
    expect(events).toHaveLength(1);
  });
});

describe('tenancy and authentication', () => {
  it('answers 404 for another org and 401 without a token', async () => {
    const m = await save('private');
    const {
      entityIds: [id],
    } = await record(m, [{ name: 'Secret Project', type: 'project' }]);
    const b = await signUp(stack.api);
    expect((await stack.api.get(`/api/entities/${id}`, { token: b.token })).status).toBe(404);
    expect((await stack.api.get(`/api/entities/${id}?include_memories=1`, { token: b.token })).status).toBe(404);
    expect((await stack.api.patch(`/api/entities/${id}`, { token: b.token, body: { display_name: 'Stolen' } })).status).toBe(404);
    expect((await stack.api.delete(`/api/entities/${id}`, { token: b.token })).status).toBe(404);
    expect((await list('?q=secret', b)).body.entities).toEqual([]);
    expect((await stack.api.get(`/api/memories?entity=${id}`, { token: b.token })).body).toEqual([]);
    expect((await entity(id!)).display_name).toBe('Secret Project');

    expect((await stack.api.get('/api/entities')).status).toBe(401);
    expect((await stack.api.get(`/api/entities/${id}`)).status).toBe(401);
    expect((await stack.api.patch(`/api/entities/${id}`, { body: { display_name: 'x' } })).status).toBe(401);
    expect((await stack.api.delete(`/api/entities/${id}`)).status).toBe(401);
  });
});
