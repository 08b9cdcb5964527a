import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { eventually, signUp, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false });
});
afterAll(async () => stack?.close());

describe('GET /api/events', () => {
  it('lists the org audit log newest first, with the default limit', async () => {
    const a = await signUp(stack.api);
    const res = await stack.api.get('/api/events', { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ limit: 100, offset: 0 });
    const actions = res.body.events.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['user.signup', 'org.create', 'token.create']));
    const orgCreate = res.body.events.find((e: { action: string }) => e.action === 'org.create');
    expect(orgCreate).toMatchObject({ target_id: a.org.id, actor_user_id: a.user.id, actor_token: null });
    const times = res.body.events.map((e: { created_at: number }) => e.created_at);
    expect([...times].sort((x, y) => y - x)).toEqual(times);
  });

  it('filters by action prefix, actor, target and time, and pages', async () => {
    const a = await signUp(stack.api);
    for (let i = 0; i < 3; i++) await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: `t${i}` } });
    const since = Date.now();
    // The next write is stamped after `since`.
    await eventually(async () => Date.now() > since);
    const late = await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: 'late' } });

    const byPrefix = await stack.api.get('/api/events?action=token.', { token: a.token });
    expect(byPrefix.body.events.every((e: { action: string }) => e.action.startsWith('token.'))).toBe(true);
    expect(byPrefix.body.events).toHaveLength(5);
    expect((await stack.api.get('/api/events?action=token.cr', { token: a.token })).body.events).toHaveLength(5);
    expect((await stack.api.get('/api/events?action=%25', { token: a.token })).body.events).toHaveLength(0);

    const byTarget = await stack.api.get(`/api/events?target=${late.body.id}`, { token: a.token });
    expect(byTarget.body.events.map((e: { action: string }) => e.action)).toEqual(['token.create']);
    const byActor = await stack.api.get(`/api/events?actor=${a.user.id}&action=token.`, { token: a.token });
    expect(byActor.body.events).toHaveLength(5);
    const tokenActor = byActor.body.events.find((e: { target_id: string }) => e.target_id === late.body.id);
    expect(tokenActor.actor_token).toBe(a.tokenId);
    expect((await stack.api.get(`/api/events?actor=${crypto.randomUUID()}`, { token: a.token })).body.events).toHaveLength(0);

    const sinceRes = await stack.api.get(`/api/events?since=${since}`, { token: a.token });
    expect(sinceRes.body.events.map((e: { target_id: string }) => e.target_id)).toEqual([late.body.id]);
    const untilRes = await stack.api.get(`/api/events?until=${since}&action=token.`, { token: a.token });
    expect(untilRes.body.events).toHaveLength(4);

    const page1 = await stack.api.get('/api/events?action=token.&limit=2', { token: a.token });
    const page2 = await stack.api.get('/api/events?action=token.&limit=2&offset=2', { token: a.token });
    expect(page1.body).toMatchObject({ limit: 2, offset: 0 });
    expect(page2.body).toMatchObject({ limit: 2, offset: 2 });
    const ids = [...page1.body.events, ...page2.body.events].map((e: { id: string }) => e.id);
    expect(new Set(ids).size).toBe(4);
    expect(ids).toEqual(byPrefix.body.events.slice(0, 4).map((e: { id: string }) => e.id));
  });

  it('rejects out-of-range and malformed filters with 400', async () => {
    const a = await signUp(stack.api);
    for (const q of ['limit=0', 'limit=501', 'limit=abc', 'offset=-1', 'actor=nope', 'since=yesterday', 'limit=1.5']) {
      const res = await stack.api.get(`/api/events?${q}`, { token: a.token });
      expect(res.status, q).toBe(400);
      expect(res.body.error).toBe('validation_failed');
    }
    expect((await stack.api.get('/api/events?limit=500', { token: a.token })).status).toBe(200);
  });

  it('names who acted, with which token or session, and what on, read from the org itself', async () => {
    const a = await signUp(stack.api, { name: 'Grace Hopper', org_name: 'Compilers' });
    const ci = (await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: 'ci agent' } })).body;
    const content = 'The deploy window is Tuesday from ten to noon UTC, never a Friday, and on-call approves each one';
    const memory = (await stack.api.post('/api/memories', { token: ci.raw, body: { content, namespace: 'ops' } })).body;
    const typed = (await stack.api.post('/api/memories', { cookie: a.cookie, body: { content: 'typed here', source: 'dashboard' } })).body;
    const gone = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'soon deleted', namespace: 'scratch' } })).body;
    expect((await stack.api.delete(`/api/memories/${gone.id}`, { token: a.token })).status).toBe(204);
    const projects = (await stack.api.get('/api/projects', { token: a.token })).body.projects as { id: string; name: string }[];
    const scratch = projects.find((p) => p.name === 'scratch')!;
    const ops = projects.find((p) => p.name === 'ops')!;
    expect((await stack.api.patch(`/api/projects/${ops.id}`, { token: a.token, body: { description: 'deploys' } })).status).toBe(200);
    expect((await stack.api.delete(`/api/projects/${scratch.id}`, { token: a.token })).status).toBe(204);
    // A member who acts in the org and is then removed: named while a member, not after.
    const b = await signUp(stack.api, { name: 'Alan Turing' });
    expect(
      (await stack.api.post(`/api/orgs/${a.org.id}/members`, { token: a.token, body: { email: b.user.email, role: 'member' } })).status,
    ).toBe(201);
    const named = async () => (await stack.api.get('/api/events?limit=500', { token: a.token })).body.events as Record<string, any>[];
    const added = (await named()).find((e) => e.action === 'org.member.add')!;
    expect(added.target).toEqual({ kind: 'member', id: b.user.id, label: 'Alan Turing', exists: true });
    expect((await stack.api.post('/api/auth/switch-org', { cookie: b.cookie, body: { org_id: a.org.id } })).status).toBe(200);
    const theirs = (await stack.api.post('/api/memories', { cookie: b.cookie, body: { content: 'written by a member' } })).body;
    expect((await stack.api.delete(`/api/orgs/${a.org.id}/members/${b.user.id}`, { token: a.token })).status).toBe(204);

    const events = await named();
    const of = (action: string, target?: string) =>
      events.find((e) => e.action === action && (target === undefined || e.target_id === target))!;
    expect(of('memory.save', memory.id)).toMatchObject({
      actor_user_id: a.user.id,
      actor: { id: a.user.id, name: 'Grace Hopper', email: a.user.email },
      token: { id: ci.id, kind: 'api_token', name: 'ci agent' },
      target: { kind: 'memory', id: memory.id, label: `${content.slice(0, 80)}…`, exists: true },
    });
    expect(of('memory.save', typed.id)).toMatchObject({
      token: { kind: 'session', name: null },
      target: { label: 'typed here', exists: true },
    });
    expect(of('memory.delete', gone.id).target).toEqual({ kind: 'memory', id: gone.id, label: null, exists: false });
    expect(of('project.update', ops.id).target).toEqual({ kind: 'project', id: ops.id, label: 'ops', exists: true });
    // A deleted project keeps the name its row recorded.
    expect(of('project.delete', scratch.id).target).toEqual({ kind: 'project', id: scratch.id, label: 'scratch', exists: false });
    expect(of('org.create').target).toEqual({ kind: 'organization', id: a.org.id, label: 'Compilers', exists: true });
    expect(of('token.create', ci.id)).toMatchObject({
      token: { id: a.tokenId, kind: 'api_token', name: 'default' },
      target: { kind: 'token', label: 'ci agent' },
    });
    expect(of('user.signup')).toMatchObject({
      actor: { name: 'Grace Hopper' },
      token: null,
      target: { kind: 'member', id: a.user.id, label: 'Grace Hopper' },
    });
    // The removed member: the rows about them and by them keep their ids, without their name.
    expect(of('memory.save', theirs.id)).toMatchObject({
      actor_user_id: b.user.id,
      actor: null,
      target: { label: 'written by a member', exists: true },
    });
    expect(of('org.member.remove', b.user.id)).toMatchObject({
      actor: { name: 'Grace Hopper' },
      target: { kind: 'member', label: null, exists: false },
    });
    expect(of('org.member.add', b.user.id).target).toEqual({ kind: 'member', id: b.user.id, label: null, exists: false });

    // A row of another org that names this org's memory, person and token (none is written so; inserted here) gets none of
    // their names: every name is read from the org that asks.
    const other = await signUp(stack.api);
    await query(
      stack.orm.em.fork(),
      sql`insert into audit_events (id, org_id, action, target_id, actor_user_id, actor_token, details, created_at)
          values (gen_random_uuid(), ${other.org.id}, 'memory.update', ${memory.id}, ${a.user.id}, ${ci.id}, '{}', now())`,
    );
    const foreign = (await stack.api.get(`/api/events?target=${memory.id}`, { token: other.token })).body.events;
    expect(foreign).toEqual([
      expect.objectContaining({
        actor_user_id: a.user.id,
        actor: null,
        token: null,
        target: { kind: 'memory', id: memory.id, label: null, exists: false },
      }),
    ]);

    // A memory's history names them the same way.
    const history = (await stack.api.get(`/api/memories/${memory.id}/history`, { token: a.token })).body;
    expect(history.events).toEqual([
      expect.objectContaining({
        action: 'memory.save',
        actor: { id: a.user.id, name: 'Grace Hopper', email: a.user.email },
        token: { id: ci.id, kind: 'api_token', name: 'ci agent' },
      }),
    ]);
  });

  it("never shows another org's events", async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    const res = await stack.api.get(`/api/events?target=${a.org.id}`, { token: b.token });
    expect(res.body.events).toHaveLength(0);
    const all = await stack.api.get('/api/events?limit=500', { token: b.token });
    expect(all.body.events.every((e: { actor_user_id: string }) => e.actor_user_id === b.user.id)).toBe(true);
    expect((await stack.api.get('/api/events')).status).toBe(401);
  });
});
