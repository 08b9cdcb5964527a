import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMembership } from '../../domain/accounts/rows.ts';
import { queryOne, sql } from '../../domain/sql.ts';
import { recordedMails } from '../support/mail.ts';
import { ORG_ID } from '../../temporal/search-attributes.ts';
import { eventually, signUp, startStack, uniqueEmail, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.close());

const cookieHeader = (res: { headers: Headers }) => res.headers.getSetCookie().find((c) => c.startsWith('svc_session='));

describe('POST /api/auth/signup', () => {
  it('creates user, org (caller owner), one default token and a session in one workflow', async () => {
    const email = uniqueEmail('Signup');
    const res = await stack.api.post('/api/auth/signup', {
      body: { email, password: 'long enough pw', name: 'Grace', org_name: 'Hopper & Co' },
    });
    expect(res.status).toBe(201);
    expect(res.body.email_verification_sent).toBe(true);
    expect(res.body.user).toMatchObject({ email: email.toLowerCase(), name: 'Grace', email_verified: false });
    expect(res.body.org).toMatchObject({ name: 'Hopper & Co', slug: 'hopper-co', plan: 'free', role: 'owner' });
    expect(res.body.api_token.raw).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(res.body.api_token.prefix).toBe(res.body.api_token.raw.slice(0, 8));

    const cookie = cookieHeader(res)!;
    expect(cookie).toMatch(/httponly/i);
    expect(cookie).toMatch(/samesite=lax/i);
    const expires = Date.parse(/expires=([^;]+)/i.exec(cookie)![1]!);
    expect(expires - Date.now()).toBeGreaterThan(59.9 * 86_400_000);
    expect(expires - Date.now()).toBeLessThan(60.1 * 86_400_000);

    const tokens = await stack.api.get('/api/auth/tokens', { cookie: res.cookie });
    expect(tokens.body).toHaveLength(1);
    expect(tokens.body[0]).toMatchObject({ name: 'default', prefix: res.body.api_token.prefix });

    const orgId = res.body.org.id as string;
    // The account is one transaction; its verification mail leaves through the outbox as a workflow of the org.
    const description = await eventually(() =>
      stack.temporal.workflow
        .getHandle(`verification-mail-signup-${orgId}`)
        .describe()
        .catch(() => null),
    );
    expect(description.type).toBe('verificationMailWorkflow');
    expect(description.typedSearchAttributes.get(ORG_ID)).toBe(orgId);
    expect(String(description.memo?.description)).toContain('verification');
    const found = [];
    for await (const wf of stack.temporal.workflow.list({ query: `OrgId = "${orgId}"` })) found.push(wf.workflowId);
    expect(found).toContain(`verification-mail-signup-${orgId}`);
  });

  it('sends the verification mail through the outbox, after the answer', async () => {
    const account = await signUp(stack.api);
    const mail = await eventually(
      async () => (await recordedMails(stack.orm.em.fork(), { dedupeKey: `verification:signup-${account.org.id}` }))[0],
    );
    expect(mail.toAddress).toBe(account.user.email);
    expect(mail.kind).toBe('email_verification');
    expect(mail.textBody).toMatch(/token=svc_/);
    expect(mail.sentAt).toBeInstanceOf(Date);
    await stack.temporal.workflow.getHandle(`verification-mail-signup-${account.org.id}`).result();
  });

  it('refuses a second account for the same address, whatever its case', async () => {
    const email = uniqueEmail('dupe');
    await signUp(stack.api, { email });
    const again = await stack.api.post('/api/auth/signup', {
      body: { email: email.toUpperCase(), password: 'another password', name: 'X', org_name: 'Y' },
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('email_taken');
  });

  it('refuses a race of two sign-ups for one address with exactly one 201', async () => {
    const email = uniqueEmail('race');
    const body = { email, password: 'long enough pw', name: 'R', org_name: 'Race' };
    const results = await Promise.all([stack.api.post('/api/auth/signup', { body }), stack.api.post('/api/auth/signup', { body })]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const orgs = (await queryOne(stack.orm.em.fork(), sql<{ n: number }>`select count(*)::int as n from orgs where name = 'Race'`))!.n;
    expect(orgs).toBeGreaterThanOrEqual(1);
  });

  it('gives a unique slug when the name is taken', async () => {
    const a = await signUp(stack.api, { org_name: 'Same Name Inc' });
    const b = await signUp(stack.api, { org_name: 'Same Name Inc' });
    expect(a.org.slug).not.toBe(b.org.slug);
    expect(b.org.slug).toMatch(/^same-name-inc(-[0-9a-f]{8})?$/);
  });

  it('validates every field with issues', async () => {
    const res = await stack.api.post('/api/auth/signup', {
      body: { email: 'not-an-email', password: 'short', name: '', org_name: 'x'.repeat(201) },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_failed');
    const paths = res.body.issues.map((i: { path: string }) => i.path).sort();
    expect(paths).toEqual(['body.email', 'body.name', 'body.org_name', 'body.password']);
    expect(res.body.issues.find((i: { path: string }) => i.path === 'body.password').message).toMatch(/10/);
  });
});

describe('POST /api/auth/login and /logout', () => {
  it('signs in, sets the cookie, and logout ends that session only', async () => {
    const account = await signUp(stack.api);
    const login = await stack.api.post('/api/auth/login', {
      body: { email: account.user.email.toUpperCase(), password: account.password },
    });
    expect(login.status).toBe(200);
    expect(login.body.user.id).toBe(account.user.id);
    expect(login.body.org).toMatchObject({ id: account.org.id, role: 'owner' });
    expect(cookieHeader(login)).toMatch(/httponly/i);
    const session = login.cookie!;

    const logout = await stack.api.post('/api/auth/logout', { cookie: session });
    expect(logout.status).toBe(200);
    expect(logout.body).toEqual({ ok: true });
    expect(cookieHeader(logout)).toMatch(/expires=Thu, 01 Jan 1970/i);
    expect((await stack.api.get('/api/auth/me', { cookie: session })).status).toBe(401);
    expect((await stack.api.get('/api/auth/me', { cookie: account.cookie })).status).toBe(200);
    expect((await stack.api.post('/api/auth/logout')).status).toBe(200);
  });

  it('answers 401 for a wrong password and for an unknown address alike', async () => {
    const account = await signUp(stack.api);
    const wrong = await stack.api.post('/api/auth/login', { body: { email: account.user.email, password: 'not the password' } });
    const unknown = await stack.api.post('/api/auth/login', { body: { email: uniqueEmail('ghost'), password: 'whatever12345' } });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_credentials');
      expect(res.cookie).toBeUndefined();
    }
  });

  it('binds the session to org_id when given, 403 when not a member', async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    const em = stack.orm.em.fork();
    await insertMembership(em, { orgId: b.org.id, userId: a.user.id, role: 'member', now: new Date() });

    const intoB = await stack.api.post('/api/auth/login', { body: { email: a.user.email, password: a.password, org_id: b.org.id } });
    expect(intoB.status).toBe(200);
    expect(intoB.body.org).toMatchObject({ id: b.org.id, role: 'member' });
    // Without org_id the session goes to the org used last.
    const last = await stack.api.post('/api/auth/login', { body: { email: a.user.email, password: a.password } });
    expect(last.body.org.id).toBe(b.org.id);

    const outsider = await signUp(stack.api);
    const denied = await stack.api.post('/api/auth/login', {
      body: { email: a.user.email, password: a.password, org_id: outsider.org.id },
    });
    expect(denied.status).toBe(403);
  });
});

describe('GET and PATCH /api/auth/me', () => {
  it('needs a credential', async () => {
    const none = await stack.api.get('/api/auth/me');
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('unauthorized');
    expect((await stack.api.get('/api/auth/me', { token: 'svc_not-a-real-token' })).status).toBe(401);
    expect((await stack.api.get('/api/auth/me', { headers: { authorization: 'Basic abc' } })).status).toBe(401);
    expect((await stack.api.get('/api/auth/me', { cookie: 'garbage' })).status).toBe(401);
  });

  it('checks the cookie first and ignores the header when the cookie is valid', async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    const both = await stack.api.get('/api/auth/me', { cookie: a.cookie, token: b.token });
    expect(both.body.user.id).toBe(a.user.id);
    const bogusHeader = await stack.api.get('/api/auth/me', { cookie: a.cookie, token: 'svc_bogus' });
    expect(bogusHeader.status).toBe(200);
    const badCookie = await stack.api.get('/api/auth/me', { cookie: 'svc_expired-or-wrong', token: b.token });
    expect(badCookie.body.user.id).toBe(b.user.id);
  });

  it('refreshes the cookie expiry on GET for cookie callers', async () => {
    const a = await signUp(stack.api);
    await stack.orm.em
      .fork()
      .getConnection()
      .execute(`update credentials set expires_at = now() + interval '1 day' where kind = 'session' and user_id = ?`, [a.user.id]);
    const me = await stack.api.get('/api/auth/me', { cookie: a.cookie });
    expect(me.status).toBe(200);
    const cookie = cookieHeader(me)!;
    expect(Date.parse(/expires=([^;]+)/i.exec(cookie)![1]!) - Date.now()).toBeGreaterThan(59.9 * 86_400_000);
    const [row] = await stack.orm.em
      .fork()
      .getConnection()
      .execute(`select expires_at from credentials where kind = 'session' and user_id = ?`, [a.user.id]);
    expect(new Date(row!.expires_at).getTime() - Date.now()).toBeGreaterThan(59.9 * 86_400_000);
    expect(cookieHeader(await stack.api.get('/api/auth/me', { token: a.token }))).toBeUndefined();
  });

  it('rejects an expired session', async () => {
    const a = await signUp(stack.api);
    await stack.orm.em
      .fork()
      .getConnection()
      .execute(`update credentials set expires_at = now() - interval '1 second' where kind = 'session' and user_id = ?`, [a.user.id]);
    expect((await stack.api.get('/api/auth/me', { cookie: a.cookie })).status).toBe(401);
  });

  it('renames the user, with audit', async () => {
    const a = await signUp(stack.api);
    const res = await stack.api.patch('/api/auth/me', { token: a.token, body: { name: '  Ada King  ' } });
    expect(res.status).toBe(200);
    expect(res.body.user.name).toBe('Ada King');
    expect((await stack.api.get('/api/auth/me', { token: a.token })).body.user.name).toBe('Ada King');
    expect((await stack.api.patch('/api/auth/me', { token: a.token, body: {} })).status).toBe(400);
    expect((await stack.api.patch('/api/auth/me', { token: a.token, body: { name: '' } })).status).toBe(400);
    const events = await stack.api.get('/api/events?action=user.update', { token: a.token });
    expect(events.body.events).toHaveLength(1);
  });
});

describe('POST /api/auth/switch-org', () => {
  it('rebinds the cookie session to another org of the user', async () => {
    const a = await signUp(stack.api);
    const b = await signUp(stack.api);
    const em = stack.orm.em.fork();
    await insertMembership(em, { orgId: b.org.id, userId: a.user.id, role: 'admin', now: new Date() });

    const switched = await stack.api.post('/api/auth/switch-org', { cookie: a.cookie, body: { org_id: b.org.id } });
    expect(switched.status).toBe(200);
    expect(switched.body.org).toMatchObject({ id: b.org.id, role: 'admin' });
    expect((await stack.api.get('/api/auth/me', { cookie: a.cookie })).body.org.id).toBe(b.org.id);

    const outsider = await signUp(stack.api);
    expect((await stack.api.post('/api/auth/switch-org', { cookie: a.cookie, body: { org_id: outsider.org.id } })).status).toBe(404);
    const withToken = await stack.api.post('/api/auth/switch-org', { token: a.token, body: { org_id: b.org.id } });
    expect(withToken.status).toBe(400);
    expect(withToken.body.error).toBe('session_required');
  });
});

describe('POST /api/auth/resend-verification', () => {
  it('queues a fresh verification mail through the outbox', async () => {
    const a = await signUp(stack.api);
    const res = await stack.api.post('/api/auth/resend-verification', { token: a.token });
    expect(res.status).toBe(202);
    const mails = await eventually(async () => {
      const rows = await recordedMails(stack.orm.em.fork(), { to: a.user.email });
      return rows.length === 2 ? rows : undefined;
    });
    expect(new Set(mails.map((m) => m.textBody)).size).toBe(2);
    expect((await stack.api.post('/api/auth/resend-verification')).status).toBe(401);
  });

  it('answers 409 once the address is verified', async () => {
    const a = await signUp(stack.api);
    await stack.orm.em.fork().getConnection().execute(`update users set email_verified_at = now() where id = ?`, [a.user.id]);
    const res = await stack.api.post('/api/auth/resend-verification', { token: a.token });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('email_already_verified');
  });
});
