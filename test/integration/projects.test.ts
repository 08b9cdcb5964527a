import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import type { Caller } from '../../domain/accounts/caller.ts';
import { newId } from '../../domain/ids.ts';
import { MAX_PROJECTS_PER_ORG } from '../../domain/store/namespaces.ts';
import { NO_SCOPES, type MemoryView } from '../../domain/store/model.ts';
import { writeSaves } from '../../domain/memories/save-batch.ts';
import { deleteProject } from '../../domain/projects/delete.ts';
import { ORG_ID } from '../../temporal/search-attributes.ts';
import {
  eventually,
  lockWaiters,
  signUp,
  startStack,
  subscribeToMemoryEvents,
  withRelay,
  type SignedUp,
  type Stack,
} from '../support/stack.ts';

let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  await subscribeToMemoryEvents(stack, a.org.id);
});
afterAll(async () => stack?.close());

// The project-erase workflow's result once it has finished, with its OrgId search attribute.
const erasure = async (projectId: string) => {
  const handle = stack.temporal.workflow.getHandle(`project-erase-${projectId}`);
  const described = await handle.describe().catch(() => undefined);
  if (described?.status.name !== 'COMPLETED') return undefined;
  return { result: (await handle.result()) as number, orgId: described.typedSearchAttributes.get(ORG_ID) };
};
const save = (body: Record<string, unknown>, token = a.token) => stack.api.post('/api/memories', { token, body });
const projects = async (token = a.token) =>
  (await stack.api.get('/api/projects', { token })).body.projects as { id: string; name: string; memory_count: number }[];

describe('/api/projects', () => {
  it('lists projects by recent activity with right memory counts', async () => {
    const b = await signUp(stack.api);
    await save({ content: 'one', namespace: 'p-old' }, b.token);
    await save({ content: 'two', namespace: 'p-new' }, b.token);
    await save({ content: 'three', namespace: 'p-new' }, b.token);
    let list = await projects(b.token);
    expect(list.map((p) => [p.name, p.memory_count])).toEqual([
      ['p-new', 2],
      ['p-old', 1],
    ]);
    await save({ content: 'four', namespace: 'p-old' }, b.token);
    list = await projects(b.token);
    expect(list.map((p) => [p.name, p.memory_count])).toEqual([
      ['p-old', 2],
      ['p-new', 2],
    ]);
    const moved = (await save({ content: 'five', namespace: 'p-new' }, b.token)).body;
    await stack.api.patch(`/api/memories/${moved.id}`, { token: b.token, body: { namespace: 'p-old' } });
    await stack.api.delete(`/api/memories/${list[1]!.id}`, { token: b.token });
    list = await projects(b.token);
    expect(Object.fromEntries(list.map((p) => [p.name, p.memory_count]))).toEqual({ 'p-old': 3, 'p-new': 2 });
    expect((await projects(a.token)).map((p) => p.name)).not.toContain('p-old');
  });

  it('pages the list and caps an org at MAX_PROJECTS_PER_ORG projects', async () => {
    const b = await signUp(stack.api);
    await save({ content: 'first', namespace: 'p-first' }, b.token);
    // The rest of the cap is inserted directly: 10,000 saves would test the API's speed, not the cap.
    await query(
      stack.orm.em.fork(),
      sql`insert into namespaces (id, org_id, name, metadata, created_at, updated_at)
          select gen_random_uuid(), ${b.org.id}, 'bulk-' || i, '{}', now() - make_interval(hours => 1, secs => i),
            now() - make_interval(hours => 1, secs => i)
            from generate_series(1, ${MAX_PROJECTS_PER_ORG - 1}) as i`,
    );
    expect((await projects(b.token)).length).toBe(MAX_PROJECTS_PER_ORG);
    const page = await stack.api.get('/api/projects?limit=2&offset=1', { token: b.token });
    expect(page.body.projects.map((p: { name: string }) => p.name)).toEqual(['bulk-1', 'bulk-2']);
    const refused = await save({ content: 'one too many', namespace: 'p-new' }, b.token);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'project_limit' });
    const moved = await stack.api.patch(`/api/memories/${(await save({ content: 'fits', namespace: 'p-first' }, b.token)).body.id}`, {
      token: b.token,
      body: { namespace: 'p-new' },
    });
    expect(moved.status).toBe(409);
    expect((await save({ content: 'an existing project still takes memories', namespace: 'bulk-7' }, b.token)).status).toBe(201);
    await stack.api.delete(`/api/projects/${page.body.projects[0].id}`, { token: b.token });
    expect((await save({ content: 'room again', namespace: 'p-new' }, b.token)).status).toBe(201);
  });

  it('gets one project, 404 across orgs', async () => {
    await save({ content: 'x', namespace: 'mine' });
    const mine = (await projects()).find((p) => p.name === 'mine')!;
    const got = await stack.api.get(`/api/projects/${mine.id}`, { token: a.token });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: mine.id, name: 'mine', description: null, metadata: {}, memory_count: 1, archived_at: null });
    const b = await signUp(stack.api);
    expect((await stack.api.get(`/api/projects/${mine.id}`, { token: b.token })).status).toBe(404);
    expect((await stack.api.patch(`/api/projects/${mine.id}`, { token: b.token, body: { name: 'stolen' } })).status).toBe(404);
    expect((await stack.api.delete(`/api/projects/${mine.id}`, { token: b.token })).status).toBe(404);
  });

  it('renames, describes, merges metadata, archives and unarchives', async () => {
    const m = (await save({ content: 'rename me', namespace: 'before' })).body;
    const project = (await projects()).find((p) => p.name === 'before')!;
    const patch = (body: unknown) => stack.api.patch(`/api/projects/${project.id}`, { token: a.token, body });
    let res = await patch({ name: 'after', description: 'about', metadata: { a: 1, b: 2 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'after', description: 'about', metadata: { a: 1, b: 2 } });
    expect((await stack.api.get(`/api/memories/${m.id}`, { token: a.token })).body.namespace).toBe('after');
    res = await patch({ metadata: { a: null, c: 3 }, description: null });
    expect(res.body).toMatchObject({ description: null, metadata: { b: 2, c: 3 } });
    res = await patch({ archived: true });
    const stamped = res.body.archived_at;
    expect(stamped).toBeGreaterThan(Date.now() - 60_000);
    expect((await patch({ archived: true })).body.archived_at).toBe(stamped);
    expect((await patch({ archived: false })).body.archived_at).toBeNull();
    await save({ content: 'y', namespace: 'taken' });
    const clash = await patch({ name: 'taken' });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toBe('project_name_taken');
    expect((await patch({})).body.error).toBe('no patchable fields supplied');
    expect((await patch({ archived: 'yes' })).status).toBe(400);
  });

  it('deletes every memory of the project, with audit project.delete', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await save({ content: `doomed unicorn ${i}`, namespace: 'doomed' })).body.id);
    const keep = (await save({ content: 'surviving unicorn', namespace: 'kept' })).body.id;
    const project = (await projects()).find((p) => p.name === 'doomed')!;
    expect((await stack.api.delete(`/api/projects/${project.id}`, { token: a.token })).status).toBe(204);
    // Gone from every read at once...
    for (const id of ids) expect((await stack.api.get(`/api/memories/${id}`, { token: a.token })).status).toBe(404);
    expect((await stack.api.get(`/api/projects/${project.id}`, { token: a.token })).status).toBe(404);
    const hits = (await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'unicorn' } })).body.hits;
    expect(hits.map((h: { id: string }) => h.id)).toEqual([keep]);
    // ...and erased by the project-erase workflow, which the outbox starts with the org's search attribute.
    const erased = await withRelay(stack, () => eventually(() => erasure(project.id)));
    expect(erased).toMatchObject({ result: 3, orgId: a.org.id });
    const postings = await query(
      stack.orm.em.fork(),
      sql<{ n: number }>`select count(*)::int as n from lexical_staged where memory_id = any(${ids}::uuid[])`,
    );
    expect(postings[0]!.n).toBe(0);
    const audit = await stack.api.get(`/api/events?action=project.delete&target=${project.id}`, { token: a.token });
    expect(audit.body.events).toHaveLength(1);
    const deleted = await query(
      stack.orm.em.fork(),
      sql<{ n: number }>`select count(*)::int as n from events where type = 'memory.deleted' and data->>'id' = any(${ids}::text[])`,
    );
    expect(deleted[0]!.n).toBe(3);
    const total = (await stack.api.post('/api/memories/list', { token: a.token, body: {} })).body.total;
    const listed = (await stack.api.post('/api/memories/list', { token: a.token, body: { limit: 500 } })).body.memories.length;
    expect(total).toBe(listed);
  });
});

describe('/api/threads', () => {
  it('groups by parent_ref, orders chunks by chunk_index then time, and falls back to a memory id', async () => {
    const c = await signUp(stack.api);
    const ref = `conv-${Date.now()}`;
    await save({ content: 'second chunk', metadata: { parent_ref: ref, chunk_index: 2 } }, c.token);
    await save({ content: 'no index', metadata: { parent_ref: ref } }, c.token);
    await save({ content: 'first chunk', metadata: { parent_ref: ref, chunk_index: 1, title: 'The talk' } }, c.token);
    const solo = (
      await save({ content: 'a solo memory with a long text that becomes the title of its own thread', namespace: 'solo' }, c.token)
    ).body;

    const thread = await stack.api.get(`/api/threads/${ref}`, { token: c.token });
    expect(thread.status).toBe(200);
    expect(thread.body.parent_ref).toBe(ref);
    expect(thread.body.chunks.map((ch: { content: string }) => ch.content)).toEqual(['first chunk', 'second chunk', 'no index']);

    const list = await stack.api.get('/api/threads', { token: c.token });
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    const byRef = new Map(list.body.map((t: { parent_ref: string }) => [t.parent_ref, t]));
    expect(byRef.get(ref)).toMatchObject({ count: 3, namespace: 'default', title: 'second chunk', has_chunks: true });
    expect(byRef.get(solo.id)).toMatchObject({
      count: 1,
      namespace: 'solo',
      has_chunks: false,
      first_at: solo.created_at,
      last_at: solo.created_at,
    });
    expect((byRef.get(solo.id) as { title: string }).title).toBe(solo.content.slice(0, 80));
    expect(list.body[0].parent_ref).toBe(solo.id);
    expect((await stack.api.get('/api/threads?namespace=solo', { token: c.token })).body).toHaveLength(1);
    expect((await stack.api.get('/api/threads?limit=1&offset=1', { token: c.token })).body[0].parent_ref).toBe(ref);
    // Conversations only: the memory saved on its own is left out (and still read as a thread of one, below).
    const conversations = await stack.api.get('/api/threads?solo=exclude', { token: c.token });
    expect(conversations.body.map((t: { parent_ref: string }) => t.parent_ref)).toEqual([ref]);
    expect((await stack.api.get('/api/threads?solo=include', { token: c.token })).body).toEqual(list.body);
    expect((await stack.api.get('/api/threads?solo=exclude&namespace=solo', { token: c.token })).body).toEqual([]);

    const fallback = await stack.api.get(`/api/threads/${solo.id}`, { token: c.token });
    expect(fallback.body).toEqual({ parent_ref: solo.id, chunks: [{ id: solo.id, content: solo.content, metadata: {} }] });
    expect((await stack.api.get('/api/threads/no-such-thread', { token: c.token })).status).toBe(404);
    expect((await stack.api.get(`/api/threads/${ref}`, { token: a.token })).status).toBe(404);
    for (const q of ['limit=0', 'limit=501', 'offset=-1', 'solo=no'])
      expect((await stack.api.get(`/api/threads?${q}`, { token: c.token })).status).toBe(400);
  });
});

describe('thread listing', () => {
  // The exhaustive grouping of every memory, as listThreads ran before it walked only the newest memories.
  const oracle = (orgId: string, namespace: string | null, limit: number, offset: number, solo = true) =>
    query(
      stack.orm.em.fork(),
      sql<{ parent_ref: string; count: string; title: string; namespace: string }>`
        with t as (
          select coalesce(m.metadata->>'parent_ref', m.id::text) as ref, m.namespace_id, m.content, m.metadata, m.created_at, m.id
            from memories m join namespaces n on n.org_id = m.org_id and n.id = m.namespace_id
           where m.org_id = ${orgId} and m.superseded_by is null and (${namespace}::text is null or n.name = ${namespace})
             and (${solo}::boolean or m.metadata ? 'parent_ref')
        )
        select ref as parent_ref, (array_agg(n.name order by t.created_at, t.id))[1] as namespace, count(*) as count,
               (array_agg(coalesce(t.metadata->>'title', left(t.content, 80)) order by t.created_at, t.id))[1] as title
          from t join namespaces n on n.org_id = ${orgId} and n.id = t.namespace_id
         group by ref order by max(t.created_at) desc, ref limit ${limit} offset ${offset}`,
    );

  it('pages exactly as grouping every memory would, ties in time included', async () => {
    const c = await signUp(stack.api);
    for (const namespace of ['alpha', 'beta']) await save({ content: `seed ${namespace}`, namespace }, c.token);
    const namespaces = await query(
      stack.orm.em.fork(),
      sql<{ id: string; name: string }>`select id, name from namespaces where org_id = ${c.org.id}`,
    );
    // 600 memories over 80 shared refs and many solo ones, at 150 distinct instants (so many share one),
    // one superseded, one whose parent_ref is a memory's id.
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const rows = Array.from({ length: 600 }, (_, i) => {
      const shared = random() < 0.6;
      return {
        id: newId(),
        namespace: namespaces[Math.floor(random() * namespaces.length)]!.id,
        metadata: shared ? { parent_ref: `conv-${Math.floor(random() * 80)}`, ...(random() < 0.3 ? { title: `title ${i}` } : {}) } : {},
        at: new Date(Date.UTC(2026, 0, 1) + Math.floor(random() * 150) * 1000).toISOString(),
      };
    });
    rows[5]!.metadata = { parent_ref: rows[6]!.id };
    await query(
      stack.orm.em.fork(),
      sql`insert into memories (id, org_id, namespace_id, content, stored_bytes, doc_len, source, metadata, created_at, updated_at)
        select u.id, ${c.org.id}, u.ns, 'memory ' || u.id, 40, 2, 'api', u.meta, u.at, u.at
          from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.namespace)}::uuid[],
            ${rows.map((r) => JSON.stringify(r.metadata))}::jsonb[], ${rows.map((r) => r.at)}::timestamptz[]) as u(id, ns, meta, at)`,
    );
    await query(stack.orm.em.fork(), sql`update memories set superseded_by = ${rows[1]!.id} where id = ${rows[0]!.id}`);

    // Conversations only (solo=exclude) too: the walk then meets only the memories that have a parent_ref.
    for (const [namespace, solo] of [
      [null, true],
      ['alpha', true],
      [null, false],
      ['alpha', false],
    ] as const) {
      for (const [limit, offset] of [
        [20, 0],
        [7, 13],
        [50, 100],
        [500, 0],
        [10, 400],
      ] as const) {
        const expected = await oracle(c.org.id, namespace, limit, offset, solo);
        const filters = `${namespace ? `&namespace=${namespace}` : ''}${solo ? '' : '&solo=exclude'}`;
        const path = `/api/threads?limit=${limit}&offset=${offset}${filters}`;
        const got = (await stack.api.get(path, { token: c.token })).body as {
          parent_ref: string;
          count: number;
          title: string;
          namespace: string;
        }[];
        expect(
          got.map((t) => [t.parent_ref, t.count, t.title, t.namespace]),
          path,
        ).toEqual(expected.map((t) => [t.parent_ref, Number(t.count), t.title, t.namespace]));
      }
    }
  });
});

describe('/api/recall', () => {
  it('logs recalls of linkable memories and lists them', async () => {
    const m1 = (await save({ content: 'recall me' })).body;
    const m2 = (await save({ content: 'me too' })).body;
    const b = await signUp(stack.api);
    const foreign = (await save({ content: 'not yours' }, b.token)).body;
    const res = await stack.api.post('/api/recall', {
      token: a.token,
      body: { memory_ids: [m1.id, m2.id, foreign.id, crypto.randomUUID()], source: 'agent-x', query: 'what to recall' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ logged: 2, skipped: 2 });
    const list = await stack.api.get(`/api/recall?memory_id=${m1.id}`, { token: a.token });
    expect(list.body.recalls).toEqual([
      {
        id: expect.any(String),
        memory_id: m1.id,
        source: 'agent-x',
        query: 'what to recall',
        recalled_at: expect.any(Number),
        recalled_by: a.user.id,
      },
    ]);
    expect((await stack.api.get('/api/recall?limit=1', { token: a.token })).body.recalls).toHaveLength(1);
    expect((await stack.api.get('/api/recall', { token: b.token })).body.recalls).toEqual([]);
    for (const body of [
      { memory_ids: [] },
      { memory_ids: Array.from({ length: 101 }, () => m1.id) },
      { memory_ids: ['nope'] },
      { memory_ids: [m1.id], source: 'x'.repeat(81) },
      { memory_ids: [m1.id], query: 'x'.repeat(1001) },
    ]) {
      expect((await stack.api.post('/api/recall', { token: a.token, body })).status).toBe(400);
    }
  });
});

describe('project roles', () => {
  it('lets members read projects but only admins and owners change or delete them', async () => {
    const { insertMembership } = await import('../../domain/accounts/rows.ts');
    const owner = await signUp(stack.api);
    const member = await signUp(stack.api);
    const em = stack.orm.em.fork();
    await insertMembership(em, { orgId: owner.org.id, userId: member.user.id, role: 'member', now: new Date() });
    const session = (
      await stack.api.post('/api/auth/login', { body: { email: member.user.email, password: member.password, org_id: owner.org.id } })
    ).cookie!;
    await save({ content: 'shared', namespace: 'team-space' }, owner.token);
    const project = (await projects(owner.token)).find((p) => p.name === 'team-space')!;
    expect((await stack.api.get(`/api/projects/${project.id}`, { cookie: session })).status).toBe(200);
    expect(
      (await stack.api.post('/api/memories', { cookie: session, body: { content: 'member note', namespace: 'team-space' } })).status,
    ).toBe(201);
    const rename = await stack.api.patch(`/api/projects/${project.id}`, { cookie: session, body: { name: 'mine now' } });
    expect(rename.status).toBe(403);
    expect((await stack.api.delete(`/api/projects/${project.id}`, { cookie: session })).status).toBe(403);
    expect((await stack.api.get(`/api/projects/${project.id}`, { token: owner.token })).body.memory_count).toBe(2);
    expect((await stack.api.delete(`/api/projects/${project.id}`, { token: owner.token })).status).toBe(204);
  });

  describe("a save racing its project's deletion", () => {
    const orphans = async (orgId: string) =>
      (
        await query(
          stack.orm.em.fork(),
          sql<{ n: number }>`select count(*)::int as n from memories m where m.org_id = ${orgId}
        and not exists (select 1 from namespaces n where n.id = m.namespace_id)`,
        )
      )[0]!.n;
    const lockWaits = () => lockWaiters(stack);
    const callerOf = (who: SignedUp): Caller => ({
      userId: who.user.id,
      orgId: who.org.id,
      role: 'owner',
      plan: 'team',
      credentialId: who.tokenId,
      credentialKind: 'api',
    });

    it('saved first, it is deleted with the project: the deletion waits for it to commit', async () => {
      const b = await signUp(stack.api);
      await save({ content: 'already in the doomed project', namespace: 'doomed' }, b.token);
      const project = (await projects(b.token)).find((p) => p.name === 'doomed')!;
      const late: MemoryView = {
        id: newId(),
        content: 'saved while the project is deleted',
        namespace: 'doomed',
        tags: [],
        source: 'agent',
        sourceRef: null,
        metadata: {},
        createdAt: Date.now(),
        updatedAt: Date.now(),
        occurredAt: Date.now(),
        ...NO_SCOPES,
      };
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let written!: () => void;
      const saved = new Promise<void>((r) => (written = r));
      // The save has written its statement and not yet committed when the deletion starts.
      const saving = stack.orm.em.fork().transactional(async (tx) => {
        await writeSaves(tx, [{ caller: callerOf(b), memory: late, bytes: 30 }]);
        written();
        await held;
      });
      await saved;
      const deleting = stack.api.delete(`/api/projects/${project.id}`, { token: b.token });
      await eventually(async () => (await lockWaits()) >= 1);
      release();
      await saving;
      expect((await deleting).status).toBe(204);
      expect(await withRelay(stack, () => eventually(() => erasure(project.id)))).toMatchObject({ result: 2 });
      expect(await orphans(b.org.id)).toBe(0);
      expect((await stack.api.get(`/api/memories/${late.id}`, { token: b.token })).status).toBe(404);
      expect(await projects(b.token)).toEqual([]);
    });

    it('saved while the deletion runs, it waits and lands in the project made anew', async () => {
      const b = await signUp(stack.api);
      await save({ content: 'first of its project', namespace: 'reborn' }, b.token);
      const project = (await projects(b.token)).find((p) => p.name === 'reborn')!;
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let deleted!: () => void;
      const locked = new Promise<void>((r) => (deleted = r));
      // The deletion has run and not yet committed when the save starts.
      const deleting = stack.orm.em.fork().transactional(async (tx) => {
        await deleteProject(tx, callerOf(b), project.id);
        deleted();
        await held;
      });
      await locked;
      expect(await projects(b.token)).toHaveLength(1);
      const saving = save({ content: 'saved during the deletion', namespace: 'reborn' }, b.token);
      await eventually(async () => (await lockWaits()) >= 1);
      release();
      await deleting;
      const saved = await saving;
      expect(saved.status).toBe(201);
      expect(await withRelay(stack, () => eventually(() => erasure(project.id)))).toMatchObject({ result: 1 });
      expect(await orphans(b.org.id)).toBe(0);
      expect((await stack.api.get(`/api/memories/${saved.body.id}`, { token: b.token })).body.namespace).toBe('reborn');
      const after = await projects(b.token);
      expect(after.map((p) => [p.name, p.memory_count])).toEqual([['reborn', 1]]);
      expect(after[0]!.id).not.toBe(project.id);
    });
  });
});
