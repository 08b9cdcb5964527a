import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import pg from 'pg';
import { ORG_ID } from '../../temporal/search-attributes.ts';
import { eventually, lockWaiters, signUp, startStack, withRelay, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(async () => stack?.close());

const count = async (text: string, id: string) =>
  (await query(stack.orm.em.fork(), sql<{ n: number }>`select count(*)::int as n from ${sql.raw(text)} = ${id}`))[0]!.n;

describe('DELETE /api/auth/me', () => {
  it('re-authenticates, deletes the user and the orgs only they belong to, and clears the cookie', async () => {
    const a = await signUp(stack.api);
    for (let i = 0; i < 3; i++)
      await stack.api.post('/api/memories', { token: a.token, body: { content: `doomed memory ${i}`, namespace: 'p' } });
    await stack.api.post('/api/auth/tokens', { token: a.token, body: { name: 'extra' } });

    const wrong = await stack.api.delete('/api/auth/me', { cookie: a.cookie, body: { password: 'not it at all' } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error).toBe('password_mismatch');
    expect((await stack.api.delete('/api/auth/me', { cookie: a.cookie, body: {} })).status).toBe(400);

    const res = await stack.api.delete('/api/auth/me', { cookie: a.cookie, body: { password: a.password } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      counts: { orgs_deleted: 1, memories_deleted: 3, memberships_removed: 0, api_tokens_deleted: 2, sessions_ended: 1 },
    });
    expect(res.headers.getSetCookie().join()).toMatch(/svc_session=;/);
    expect((await stack.api.get('/api/auth/me', { token: a.token })).status).toBe(401);
    expect((await stack.api.post('/api/auth/login', { body: { email: a.user.email, password: a.password } })).status).toBe(401);
    expect(await count('users where id', a.user.id)).toBe(0);
    // The org's rows are erased in batches by the org-erase workflow, which the outbox starts.
    const erased = await withRelay(stack, async () => {
      const handle = stack.temporal.workflow.getHandle(`org-erase-${a.org.id}`);
      await eventually(async () => (await handle.describe().catch(() => undefined))?.status.name === 'COMPLETED');
      return (await handle.describe()).typedSearchAttributes.get(ORG_ID);
    });
    expect(erased).toBe(a.org.id);
    expect(await count('orgs where id', a.org.id)).toBe(0);
    expect(await count('memories where org_id', a.org.id)).toBe(0);
    expect(await count('lexical_staged where org_id', a.org.id)).toBe(0);
    expect(await count('audit_events where org_id', a.org.id)).toBe(0);
    expect(await count('counters where scope_id', a.org.id)).toBe(0);
    // The address can sign up again.
    expect(
      (
        await stack.api.post('/api/auth/signup', {
          body: { email: a.user.email, password: 'long enough pw', name: 'A', org_name: 'Again' },
        })
      ).status,
    ).toBe(201);
  });

  it('leaves shared orgs, and refuses while the user is the only owner of an org with other members', async () => {
    const owner = await signUp(stack.api);
    const member = await signUp(stack.api);
    await stack.api.post(`/api/orgs/${owner.org.id}/members`, { token: owner.token, body: { email: member.user.email } });

    const refused = await stack.api.delete('/api/auth/me', { token: owner.token, body: { password: owner.password } });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('sole_owner');
    expect((await stack.api.get('/api/auth/me', { token: owner.token })).status).toBe(200);

    const gone = await stack.api.delete('/api/auth/me', { token: member.token, body: { password: member.password } });
    expect(gone.body.counts).toMatchObject({ orgs_deleted: 1, memberships_removed: 1 });
    const members = await stack.api.get(`/api/orgs/${owner.org.id}/members`, { token: owner.token });
    expect(members.body.members.map((m: { id: string }) => m.id)).toEqual([owner.user.id]);
    expect(
      (await stack.api.get(`/api/events?action=org.member.remove&target=${member.user.id}`, { token: owner.token })).body.events,
    ).toHaveLength(1);
  });

  it('never leaves an org without an owner when two co-owners delete their accounts at once', async () => {
    for (let round = 0; round < 3; round++) {
      const first = await signUp(stack.api);
      const second = await signUp(stack.api);
      const member = await signUp(stack.api);
      const orgId = first.org.id;
      await stack.api.post(`/api/orgs/${orgId}/members`, { token: first.token, body: { email: second.user.email, role: 'owner' } });
      await stack.api.post(`/api/orgs/${orgId}/members`, { token: first.token, body: { email: member.user.email, role: 'member' } });

      // Both deletions are held at their last step, deleting their user row (after each has looked at the
      // org's owners), until both are in flight, so their transactions overlap for sure.
      const gate = new pg.Client({ connectionString: stack.config.DATABASE_URL });
      await gate.connect();
      await gate.query('begin');
      await gate.query('select id from users where id = any($1::uuid[]) for update', [[first.user.id, second.user.id]]);
      const pending = Promise.all(
        [first, second].map((who) => stack.api.delete('/api/auth/me', { token: who.token, body: { password: who.password } })),
      );
      await eventually(async () => (await lockWaiters(stack)) >= 2);
      await gate.query('commit');
      await gate.end();
      const answers = await pending;
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(answers.find((r) => r.status === 409)!.body.error).toBe('sole_owner');
      const owners = await query(
        stack.orm.em.fork(),
        sql<{ n: number }>`select count(*)::int as n from memberships where org_id = ${orgId} and role = 'owner'`,
      );
      expect(owners[0]!.n, `round ${round}`).toBe(1);
    }
  });
});
