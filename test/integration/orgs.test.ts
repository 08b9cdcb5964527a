import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { ORGS_PER_USER_MAX: '3' } });
});
// As following the link of the verification mail would.
const verify = (who: SignedUp) => query(stack.orm.em.fork(), sql`update users set email_verified_at = now() where id = ${who.user.id}`);
afterAll(async () => stack?.close());

async function loginInto(user: SignedUp, orgId: string): Promise<string> {
  const res = await stack.api.post('/api/auth/login', { body: { email: user.user.email, password: user.password, org_id: orgId } });
  expect(res.status).toBe(200);
  return res.cookie!;
}

describe('/api/orgs/:id', () => {
  it("shows the credential's org, and 404 for any other", async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    const res = await stack.api.get(`/api/orgs/${a.org.id}`, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: a.org.id,
      slug: a.org.slug,
      name: 'Analytical Engines',
      plan: 'free',
      role: 'owner',
      created_at: expect.any(Number),
    });
    expect((await stack.api.get(`/api/orgs/${b.org.id}`, { token: a.token })).status).toBe(404);
    expect((await stack.api.get(`/api/orgs/${b.org.id}/members`, { token: a.token })).status).toBe(404);
    expect((await stack.api.patch(`/api/orgs/${b.org.id}`, { token: a.token, body: { name: 'x' } })).status).toBe(404);
  });

  it('lets owners rename and re-slug, with validation and 409 on a taken slug', async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    const res = await stack.api.patch(`/api/orgs/${a.org.id}`, {
      token: a.token,
      body: { name: 'Renamed', slug: `renamed-${Date.now()}` },
    });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Renamed');
    const taken = await stack.api.patch(`/api/orgs/${a.org.id}`, { token: a.token, body: { slug: b.org.slug } });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe('slug_taken');
    for (const body of [{ slug: 'Upper' }, { slug: 'a'.repeat(81) }, { slug: 'has space' }, { name: '' }, { name: 'x'.repeat(201) }, {}]) {
      expect((await stack.api.patch(`/api/orgs/${a.org.id}`, { token: a.token, body })).status, JSON.stringify(body)).toBe(400);
    }
    expect((await stack.api.patch(`/api/orgs/${a.org.id}`, { token: a.token, body: { slug: 'a'.repeat(80) } })).status).toBe(200);
    const audit = await stack.api.get('/api/events?action=org.update', { token: a.token });
    expect(audit.body.events.length).toBe(2);
  });
});

describe('POST /api/orgs', () => {
  it('creates an org owned by the caller, which a session can switch into', async () => {
    const a = await signUp(stack.api);
    await verify(a);
    const res = await stack.api.post('/api/orgs', { cookie: a.cookie, body: { name: 'Second Venture' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'Second Venture', plan: 'free', role: 'owner' });
    expect(res.body.slug).toMatch(/^second-venture/);
    const switched = await stack.api.post('/api/auth/switch-org', { cookie: a.cookie, body: { org_id: res.body.id } });
    expect(switched.body.org.id).toBe(res.body.id);
    const audit = await stack.api.get('/api/events?action=org.create', { cookie: a.cookie });
    expect(audit.body.events.map((e: { target_id: string }) => e.target_id)).toEqual([res.body.id]);
    expect((await stack.api.post('/api/orgs', { token: a.token, body: { name: 'x', slug: a.org.slug } })).status).toBe(409);
  });

  it('needs a verified e-mail address, and stops at ORGS_PER_USER_MAX owned orgs (free quotas cannot be multiplied)', async () => {
    const a = await signUp(stack.api);
    const unverified = await stack.api.post('/api/orgs', { token: a.token, body: { name: 'Not yet' } });
    expect(unverified.status).toBe(403);
    expect(unverified.body.error).toBe('email_verification_required');
    await verify(a);
    // The org of the sign-up counts: two more make three.
    for (const name of ['Two', 'Three']) expect((await stack.api.post('/api/orgs', { token: a.token, body: { name } })).status).toBe(201);
    const over = await stack.api.post('/api/orgs', { token: a.token, body: { name: 'Four' } });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ error: 'org_limit', message: expect.stringContaining('3') });
    // Concurrent requests cannot pass the limit together.
    const b = await signUp(stack.api);
    await verify(b);
    const raced = await Promise.all(
      ['x1', 'x2', 'x3', 'x4'].map((name) => stack.api.post('/api/orgs', { token: b.token, body: { name } })),
    );
    expect(raced.filter((r) => r.status === 201)).toHaveLength(2);
    // Being added to someone else's org is not owning one: that still works as the contract says.
    const c = await signUp(stack.api);
    expect(
      (await stack.api.post(`/api/orgs/${c.org.id}/members`, { token: c.token, body: { email: a.user.email, role: 'admin' } })).status,
    ).toBe(201);
  });
});

describe('GET /api/orgs', () => {
  it("lists the organizations of the caller's user with the user's role in each, and nobody else's", async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    await verify(a);
    const second = (await stack.api.post('/api/orgs', { cookie: a.cookie, body: { name: 'Side Project' } })).body;
    expect(
      (await stack.api.post(`/api/orgs/${b.org.id}/members`, { token: b.token, body: { email: a.user.email, role: 'admin' } })).status,
    ).toBe(201);
    const listed = await stack.api.get('/api/orgs', { token: a.token });
    expect(listed.status).toBe(200);
    expect(listed.body.orgs.map((o: { id: string; role: string }) => [o.id, o.role])).toEqual([
      [a.org.id, 'owner'],
      [second.id, 'owner'],
      [b.org.id, 'admin'],
    ]);
    expect((await stack.api.get('/api/orgs', { token: b.token })).body.orgs.map((o: { id: string }) => o.id)).toEqual([b.org.id]);
  });
});

describe('members', () => {
  it('adds, lists and removes members with every rule of 4.4', async () => {
    const owner = await signUp(stack.api);
    const bob = await signUp(stack.api);
    const carol = await signUp(stack.api);
    const add = (body: unknown, token = owner.token) => stack.api.post(`/api/orgs/${owner.org.id}/members`, { token, body });

    const added = await add({ email: bob.user.email.toUpperCase() });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ user_id: bob.user.id, role: 'member' });
    expect((await add({ email: carol.user.email, role: 'admin' })).body.role).toBe('admin');
    expect((await add({ email: bob.user.email })).status).toBe(409);
    const nobody = await add({ email: 'nobody-here@example.test' });
    expect(nobody.status).toBe(404);
    expect(nobody.body.error).toBe('user_not_found');
    expect((await add({ email: bob.user.email, role: 'king' })).status).toBe(400);

    const list = await stack.api.get(`/api/orgs/${owner.org.id}/members`, { token: owner.token });
    expect(list.body.members.map((m: { id: string; role: string }) => [m.id, m.role])).toEqual([
      [owner.user.id, 'owner'],
      [bob.user.id, 'member'],
      [carol.user.id, 'admin'],
    ]);

    // Admins and members are not owners: 403 on every owner route.
    const carolSession = await loginInto(carol, owner.org.id);
    const bobSession = await loginInto(bob, owner.org.id);
    expect((await stack.api.get(`/api/orgs/${owner.org.id}/members`, { cookie: bobSession })).status).toBe(200);
    for (const cookie of [carolSession, bobSession]) {
      expect((await stack.api.post(`/api/orgs/${owner.org.id}/members`, { cookie, body: { email: owner.user.email } })).status).toBe(403);
      expect((await stack.api.delete(`/api/orgs/${owner.org.id}/members/${owner.user.id}`, { cookie })).status).toBe(403);
      expect((await stack.api.patch(`/api/orgs/${owner.org.id}`, { cookie, body: { name: 'mine' } })).status).toBe(403);
    }

    expect((await stack.api.delete(`/api/orgs/${owner.org.id}/members/${bob.user.id}`, { token: owner.token })).status).toBe(204);
    expect((await stack.api.get('/api/auth/me', { cookie: bobSession })).status).toBe(401);
    expect((await stack.api.delete(`/api/orgs/${owner.org.id}/members/${bob.user.id}`, { token: owner.token })).status).toBe(404);
    const last = await stack.api.delete(`/api/orgs/${owner.org.id}/members/${owner.user.id}`, { token: owner.token });
    expect(last.status).toBe(409);
    expect(last.body.error).toBe('last_owner');

    // With a second owner, the first may leave.
    await stack.api.delete(`/api/orgs/${owner.org.id}/members/${carol.user.id}`, { token: owner.token });
    await add({ email: carol.user.email, role: 'owner' });
    expect(
      (await stack.api.delete(`/api/orgs/${owner.org.id}/members/${owner.user.id}`, { cookie: await loginInto(carol, owner.org.id) }))
        .status,
    ).toBe(204);

    const actions = (
      await stack.api.get('/api/events?action=org.member.', { cookie: await loginInto(carol, owner.org.id) })
    ).body.events.map((e: { action: string }) => e.action);
    expect(actions.filter((a: string) => a === 'org.member.add')).toHaveLength(3);
    expect(actions.filter((a: string) => a === 'org.member.remove')).toHaveLength(3);
  });

  it("changes a member's role: owners only, effective on the member's next request, never leaving no owner", async () => {
    const owner = await signUp(stack.api);
    const bob = await signUp(stack.api);
    const stranger = await signUp(stack.api);
    await stack.api.post(`/api/orgs/${owner.org.id}/members`, { token: owner.token, body: { email: bob.user.email } });
    const bobSession = await loginInto(bob, owner.org.id);
    const setRole = (userId: string, body: unknown, auth: { token?: string; cookie?: string } = { token: owner.token }) =>
      stack.api.patch(`/api/orgs/${owner.org.id}/members/${userId}`, { ...auth, body });

    // A member may not change roles, not even their own.
    expect((await setRole(bob.user.id, { role: 'owner' }, { cookie: bobSession })).status).toBe(403);

    const promoted = await setRole(bob.user.id, { role: 'admin' });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ id: bob.user.id, email: bob.user.email, role: 'admin' });
    // Bob's existing session acts as an admin now, without signing in again.
    expect((await stack.api.get('/api/auth/me', { cookie: bobSession })).body.org.role).toBe('admin');

    expect((await setRole(bob.user.id, { role: 'king' })).status).toBe(400);
    expect((await setRole(bob.user.id, {})).status).toBe(400);
    expect((await setRole(stranger.user.id, { role: 'admin' })).status).toBe(404);
    expect(
      (await stack.api.patch(`/api/orgs/${stranger.org.id}/members/${stranger.user.id}`, { token: owner.token, body: { role: 'member' } }))
        .status,
    ).toBe(404);

    // The only owner cannot step down; with a second owner, either may.
    const alone = await setRole(owner.user.id, { role: 'member' });
    expect(alone.status).toBe(409);
    expect(alone.body.error).toBe('last_owner');
    expect((await setRole(bob.user.id, { role: 'owner' })).body.role).toBe('owner');
    expect((await setRole(owner.user.id, { role: 'admin' })).body.role).toBe('admin');
    // The former owner's token is an admin's now: owner routes answer 403.
    expect((await setRole(bob.user.id, { role: 'member' })).status).toBe(403);
    expect((await setRole(bob.user.id, { role: 'member' }, { cookie: bobSession })).status).toBe(409);

    const events = (await stack.api.get('/api/events?action=org.member.role', { cookie: bobSession })).body.events;
    expect(events.map((e: { target_id: string }) => e.target_id)).toEqual([owner.user.id, bob.user.id, bob.user.id]);
  });
});
