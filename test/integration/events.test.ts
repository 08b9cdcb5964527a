import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
