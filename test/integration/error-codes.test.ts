import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// Each error code used for what it says, through the real API: 404s that name what was not found, 401s that say
// which of their four cases they are, `content required` only for a missing content, and MCP tool errors that carry
// the route's own code and message.
let stack: Stack;
let a: SignedUp;
let b: SignedUp;
beforeAll(async () => {
  stack = await startStack({ relay: false });
  a = await signUp(stack.api);
  b = await signUp(stack.api);
});
afterAll(async () => stack?.close());

const sql = (text: string, params: unknown[] = []) => stack.orm.em.fork().getConnection().execute(text, params);

describe('404 not found', () => {
  it('names the kind of object and the id, alike for a missing id and another org’s', async () => {
    const mine = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'only org a sees this' } })).body.id as string;
    const missing = crypto.randomUUID();
    const foreign = await stack.api.get(`/api/memories/${mine}`, { token: b.token });
    const absent = await stack.api.get(`/api/memories/${missing}`, { token: b.token });
    expect([foreign.status, foreign.body]).toEqual([404, { error: 'not found', message: `memory ${mine} not found` }]);
    expect([absent.status, absent.body]).toEqual([404, { error: 'not found', message: `memory ${missing} not found` }]);
    // Updates and deletes too, and the other kinds.
    expect((await stack.api.patch(`/api/memories/${mine}`, { token: b.token, body: { tags: ['x'] } })).body.message).toBe(
      `memory ${mine} not found`,
    );
    expect((await stack.api.delete(`/api/memories/${mine}`, { token: b.token })).body.message).toBe(`memory ${mine} not found`);
    expect((await stack.api.get(`/api/projects/${missing}`, { token: a.token })).body).toEqual({
      error: 'not found',
      message: `project ${missing} not found`,
    });
    expect((await stack.api.get(`/api/procedural/${missing}`, { token: a.token })).body.message).toBe(`runbook ${missing} not found`);
    expect((await stack.api.get(`/api/orgs/${b.org.id}`, { token: a.token })).body).toEqual({
      error: 'not found',
      message: `org ${b.org.id} not found`,
    });
    expect((await stack.api.delete(`/api/auth/tokens/${b.tokenId}`, { token: a.token })).body.message).toBe(`token ${b.tokenId} not found`);
    expect((await stack.api.get('/api/no-such-route', { token: a.token })).body).toEqual({
      error: 'not found',
      message: 'route GET /api/no-such-route not found',
    });
  });

  it('reports each row of a batch update with the code and message its single update would answer', async () => {
    const mine = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'batch row' } })).body.id as string;
    const missing = crypto.randomUUID();
    const res = await stack.api.put('/api/memories/batch', {
      token: a.token,
      body: { updates: [{ id: missing, tags: ['x'] }, { id: mine }, { id: mine, tags: 'not a list' }, { id: mine, tagz: ['x'] }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.failed).toEqual([
      { id: mine, error: 'no patchable fields supplied', message: expect.stringMatching(/^send at least one of content, tags/) },
      {
        id: mine,
        error: 'validation_failed',
        message: expect.stringMatching(/^updates\.2\.tags: /),
        issues: [expect.objectContaining({ path: 'updates.2.tags' })],
      },
      {
        id: mine,
        error: 'unknown_field',
        field: 'updates.3.tagz',
        message: 'updates.3.tagz: not a field of this route (did you mean `tags`?)',
        issues: [expect.objectContaining({ path: 'updates.3.tagz' })],
      },
      { id: missing, error: 'not found', message: `memory ${missing} not found` },
    ]);
  });
});

describe('401 unauthorized', () => {
  const me = (headers: Record<string, string>) => stack.api.get('/api/auth/me', { headers });

  it('says which of its four cases a refusal is, keeping the contract’s code', async () => {
    const none = await me({});
    expect([none.status, none.body.error, none.body.reason]).toEqual([401, 'unauthorized', 'no_credential']);
    expect(none.body.message).toMatch(/no credential was sent/);

    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer', `Bearer ${a.token} extra`]) {
      const malformed = await me({ authorization });
      expect([authorization, malformed.status, malformed.body.error, malformed.body.reason]).toEqual([
        authorization,
        401,
        'unauthorized',
        'malformed_header',
      ]);
      expect(malformed.body.message).toMatch(/Authorization header is not "Bearer <token>"/);
    }

    const notOurs = await me({ authorization: 'Bearer sk-not-one-of-ours' });
    expect([notOurs.status, notOurs.body.reason]).toEqual([401, 'unknown_token']);
    expect(notOurs.body.message).toMatch(/not an API token of this service \(they start with svc_\)/);
    const unknown = await me({ authorization: `Bearer svc_${'x'.repeat(43)}` });
    expect([unknown.status, unknown.body.reason, unknown.body.message]).toEqual([
      401,
      'unknown_token',
      'no API token has this value; create a new token',
    ]);
    const garbageCookie = await me({ cookie: 'svc_session=garbage' });
    expect([garbageCookie.status, garbageCookie.body.reason]).toEqual([401, 'unknown_token']);
  });

  it('tells a revoked or expired credential, and one whose user left the org, from an unknown one', async () => {
    const user = await signUp(stack.api);
    const second = (await stack.api.post('/api/auth/tokens', { token: user.token, body: { name: 'second' } })).body;
    expect((await stack.api.delete(`/api/auth/tokens/${second.id}`, { token: user.token })).status).toBe(204);
    const revoked = await stack.api.get('/api/auth/me', { token: second.raw });
    expect([revoked.status, revoked.body.error, revoked.body.reason, revoked.body.message]).toEqual([
      401,
      'unauthorized',
      'revoked_or_expired',
      'this API token was revoked; create a new token',
    ]);

    await sql(`update credentials set expires_at = now() - interval '1 second' where kind = 'session' and user_id = ?`, [user.user.id]);
    const expired = await stack.api.get('/api/auth/me', { cookie: user.cookie });
    expect([expired.status, expired.body.reason, expired.body.message]).toEqual([
      401,
      'revoked_or_expired',
      'this session has expired; sign in again',
    ]);

    const session = (await stack.api.post('/api/auth/login', { body: { email: user.user.email, password: user.password } })).cookie!;
    await stack.api.post('/api/auth/logout', { cookie: session });
    const signedOut = await stack.api.get('/api/auth/me', { cookie: session });
    expect([signedOut.status, signedOut.body.reason, signedOut.body.message]).toEqual([
      401,
      'revoked_or_expired',
      'this session was ended (signed out); sign in again',
    ]);

    await sql('delete from memberships where user_id = ?', [user.user.id]);
    const left = await stack.api.get('/api/auth/me', { token: user.token });
    expect([left.status, left.body.reason, left.body.message]).toEqual([
      401,
      'revoked_or_expired',
      "this API token's user is no longer a member of its organization",
    ]);
  });

  it('judges the header before the cookie when neither works', async () => {
    const both = await me({ cookie: 'svc_session=garbage', authorization: 'Basic abc' });
    expect([both.status, both.body.reason]).toEqual([401, 'malformed_header']);
  });
});

describe('content required', () => {
  const save = (body: unknown) => stack.api.post('/api/memories', { token: a.token, body });

  it('is answered only when the content is missing, never for another field', async () => {
    const badTags = await save({ content: 'x', tags: 'not a list' });
    expect([badTags.status, badTags.body.error]).toEqual([400, 'validation_failed']);
    expect(badTags.body.issues).toEqual([{ path: 'body.tags', message: expect.any(String) }]);
    const notText = await save({ content: 42 });
    expect([notText.status, notText.body.error]).toEqual([400, 'validation_failed']);
    expect(notText.body.issues).toEqual([{ path: 'body.content', message: expect.stringMatching(/expected string/) }]);
    for (const missing of [{}, { content: null }, { content: '  ' }, { tags: ['x'] }]) {
      const res = await save(missing);
      expect([JSON.stringify(missing), res.status, res.body.error]).toEqual([JSON.stringify(missing), 400, 'content required']);
    }
    // Both wrong: content is missing, so the code says so, and the issues name both.
    const both = await save({ tags: 'not a list' });
    expect(both.body.error).toBe('content required');
    expect(both.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(['body.content', 'body.tags']);
  });
});

describe('MCP tool errors', () => {
  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: 'error-codes-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', stack.baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    return client;
  }
  const text = (result: { content?: unknown }) => (result.content as { text: string }[])[0]!.text;

  it('carry the code and message the HTTP route answers, for a refusal of the route and for input the tool schema refuses', async () => {
    const client = await connect(b.token);
    const mine = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'not for b' } })).body.id as string;
    const cases: [string, Record<string, unknown>, () => Promise<{ status: number; body: any }>][] = [
      ['get_memory', { id: mine }, () => stack.api.get(`/api/memories/${mine}`, { token: b.token })],
      ['get_memory', { id: 'not-a-uuid' }, () => stack.api.get('/api/memories/not-a-uuid', { token: b.token })],
      [
        'add_memory',
        { content: 'x', tags: 'not a list' },
        () => stack.api.post('/api/memories', { token: b.token, body: { content: 'x', tags: 'not a list' } }),
      ],
      ['add_memory', { tags: ['x'] }, () => stack.api.post('/api/memories', { token: b.token, body: { tags: ['x'] } })],
      ['update_memory', { id: mine }, () => stack.api.patch(`/api/memories/${mine}`, { token: b.token, body: {} })],
    ];
    for (const [name, args, http] of cases) {
      const [tool, route] = [await client.callTool({ name, arguments: args }), await http()];
      expect(route.status).toBeGreaterThanOrEqual(400);
      expect(tool.isError, name).toBe(true);
      expect(tool._meta, `${name} ${JSON.stringify(args)}`).toMatchObject({
        status: route.status,
        error: route.body.error,
        message: route.body.message,
      });
      expect(text(tool).startsWith(`${route.body.error}: ${route.body.message}`), text(tool)).toBe(true);
    }
    await client.close();
  });
});

it('serves docs/errors.md as a guide', async () => {
  const res = await fetch(`${stack.baseUrl}/docs/errors.md`);
  expect(res.status).toBe(200);
  expect(await res.text()).toBe(await readFile('docs/errors.md', 'utf8'));
});
