import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMembership } from '../../domain/accounts/rows.ts';
import { query, sql } from '../../domain/sql.ts';
import { signUp, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false });
});
afterAll(async () => stack?.close());

describe('/api/auth/tokens', () => {
  it('issues a token shown once, lists it without secrets, revokes it at once', async () => {
    const a = await signUp(stack.api);
    const created = await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: 'ci' } });
    expect(created.status).toBe(201);
    expect(created.body.raw).toMatch(/^svc_/);
    expect(created.body.prefix).toBe(created.body.raw.slice(0, 8));
    expect(created.body).toMatchObject({ name: 'ci', user_id: a.user.id, expires_at: null, last_used_at: null });

    const me = await stack.api.get('/api/auth/me', { token: created.body.raw });
    expect(me.status).toBe(200);
    expect(me.body.org.id).toBe(a.org.id);

    const list = await stack.api.get('/api/auth/tokens', { token: a.token });
    expect(list.status).toBe(200);
    expect(list.body.map((t: { name: string }) => t.name).sort()).toEqual(['ci', 'default']);
    expect(list.text).not.toContain(created.body.raw);
    expect(list.text).not.toMatch(/hash/i);
    const ci = list.body.find((t: { name: string }) => t.name === 'ci');
    expect(Object.keys(ci).sort()).toEqual(['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'user_id']);
    expect(ci.last_used_at).toEqual(expect.any(Number));

    const revoked = await stack.api.delete(`/api/auth/tokens/${created.body.id}`, { token: a.token });
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');
    const after = await stack.api.get('/api/auth/me', { token: created.body.raw });
    expect(after.status).toBe(401);
    expect((await stack.api.delete(`/api/auth/tokens/${created.body.id}`, { token: a.token })).status).toBe(404);
    expect((await stack.api.get('/api/auth/tokens', { token: a.token })).body).toHaveLength(1);

    const actions = (await stack.api.get('/api/events?action=token.', { token: a.token })).body.events.map(
      (e: { action: string }) => e.action,
    );
    expect(actions).toEqual(['token.revoke', 'token.create', 'token.create']);
  });

  it('creates tokens with an expiry that stops working once past', async () => {
    const a = await signUp(stack.api);
    const created = await stack.api.post('/api/auth/tokens', { cookie: a.cookie, body: { expires_in_days: 30 } });
    expect(created.status).toBe(201);
    expect(created.body.name).toBeNull();
    expect(created.body.expires_at - Date.now()).toBeGreaterThan(29.9 * 86_400_000);
    await stack.orm.em
      .fork()
      .getConnection()
      .execute(`update credentials set expires_at = now() - interval '1 second' where id = ?`, [created.body.id]);
    expect((await stack.api.get('/api/auth/me', { token: created.body.raw })).status).toBe(401);
    for (const body of [
      { expires_in_days: 0 },
      { expires_in_days: 3651 },
      { name: '' },
      { name: 'x'.repeat(201) },
      { expires_in_days: 'soon' },
    ]) {
      const bad = await stack.api.post('/api/auth/tokens', { token: a.token, body });
      expect(bad.status).toBe(400);
      expect(bad.body.issues.length).toBeGreaterThan(0);
    }
  });

  it("answers 404 for another org's token and for a malformed id", async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    expect((await stack.api.delete(`/api/auth/tokens/${b.tokenId}`, { token: a.token })).status).toBe(404);
    expect((await stack.api.get('/api/auth/me', { token: b.token })).status).toBe(200);
    const malformed = await stack.api.delete('/api/auth/tokens/not-a-uuid', { token: a.token });
    expect(malformed.status).toBe(400);
    expect(malformed.body.issues[0].path).toBe('path.id');
  });

  it('lets owners and admins manage every token of the org, members only their own (403)', async () => {
    const owner = await signUp(stack.api);
    const member = await signUp(stack.api);
    const em = stack.orm.em.fork();
    await insertMembership(em, { orgId: owner.org.id, userId: member.user.id, role: 'member', now: new Date() });
    const memberSession = await stack.api.post('/api/auth/login', {
      body: { email: member.user.email, password: member.password, org_id: owner.org.id },
    });
    const memberToken = (await stack.api.post('/api/auth/tokens', { cookie: memberSession.cookie!, body: { name: 'member-token' } })).body;

    const memberView = await stack.api.get('/api/auth/tokens', { token: memberToken.raw });
    expect(memberView.body.map((t: { name: string }) => t.name)).toEqual(['member-token']);
    const denied = await stack.api.delete(`/api/auth/tokens/${owner.tokenId}`, { token: memberToken.raw });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('forbidden');
    expect((await stack.api.get('/api/auth/me', { token: owner.token })).status).toBe(200);

    const ownerView = await stack.api.get('/api/auth/tokens', { token: owner.token });
    expect(ownerView.body.map((t: { name: string }) => t.name).sort()).toEqual(['default', 'member-token']);
    expect((await stack.api.delete(`/api/auth/tokens/${memberToken.id}`, { token: owner.token })).status).toBe(204);
    expect((await stack.api.get('/api/auth/me', { token: memberToken.raw })).status).toBe(401);
  });

  it('stops accepting credentials of a user removed from the org', async () => {
    const owner = await signUp(stack.api);
    const member = await signUp(stack.api);
    const em = stack.orm.em.fork();
    await insertMembership(em, { orgId: owner.org.id, userId: member.user.id, role: 'member', now: new Date() });
    const session = await stack.api.post('/api/auth/login', {
      body: { email: member.user.email, password: member.password, org_id: owner.org.id },
    });
    expect((await stack.api.get('/api/auth/me', { cookie: session.cookie! })).status).toBe(200);
    await query(em, sql`delete from memberships where org_id = ${owner.org.id} and user_id = ${member.user.id}`);
    expect((await stack.api.get('/api/auth/me', { cookie: session.cookie! })).status).toBe(401);
  });

  it('keeps at most 100 live API tokens per user and org; revoking one makes room', async () => {
    const a = await signUp(stack.api);
    // The signup's default token is the first; 98 more are written directly (the write limit allows 60 a
    // minute), the 100th through the API.
    await stack.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into credentials (id, kind, org_id, user_id, prefix, secret_hash, created_at)
       select gen_random_uuid(), 'api', ?, ?, 'svc_fill', md5(random()::text || g), now() from generate_series(1, 98) g`,
        [a.org.id, a.user.id],
      );
    const last = await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: 'the 100th' } });
    expect(last.status).toBe(201);
    const refused = await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: 'one too many' } });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('token_limit');
    expect((await stack.api.get('/api/auth/tokens', { token: a.token })).body).toHaveLength(100);
    expect((await stack.api.delete(`/api/auth/tokens/${last.body.id}`, { token: a.token })).status).toBe(204);
    expect((await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: 'room again' } })).status).toBe(201);
  });
});
