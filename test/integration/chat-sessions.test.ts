import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../domain/accounts/caller.ts';
import { appendTurns, type ChatTurn } from '../../domain/chat/sessions.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  // Sign-up runs as a workflow, so this stack needs its worker.
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

const callerOf = (s: SignedUp): Caller => ({
  userId: s.user.id,
  orgId: s.org.id,
  role: 'owner',
  plan: 'free',
  credentialId: s.tokenId,
  credentialKind: 'api',
});
const append = (sessionId: string, turns: ChatTurn[], who = a) => appendTurns(stack.orm.em.fork(), callerOf(who), sessionId, turns);
const create = async (body: Record<string, unknown> = {}, token = a.token) => {
  const res = await stack.api.post('/api/chat/sessions', { token, body });
  expect(res.status).toBe(201);
  return res.body as { id: string; title: string };
};
const list = async (token = a.token) => {
  const res = await stack.api.get('/api/chat/sessions', { token });
  expect(res.status).toBe(200);
  return res.body.sessions as { id: string; title: string; message_count: number; last_message_preview: string }[];
};

describe('/api/chat/sessions', () => {
  it('creates with and without a title', async () => {
    const res = await stack.api.post('/api/chat/sessions', { token: a.token, body: {} });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      title: 'New chat',
      message_count: 0,
      last_message_preview: '',
      metadata: {},
      created_at: expect.any(Number),
      updated_at: res.body.created_at,
    });
    expect((await create({ title: '  Trip planning  ' })).title).toBe('Trip planning');
    expect((await create({ title: 'x'.repeat(200) })).title).toHaveLength(200);
  });

  it('rejects titles outside 1..200 characters and limits outside 1..200', async () => {
    for (const title of ['', '   ', 'x'.repeat(201), 42, null]) {
      const res = await stack.api.post('/api/chat/sessions', { token: a.token, body: { title } });
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual(expect.any(String));
      expect(res.body.issues).toEqual(expect.any(Array));
    }
    for (const limit of ['0', '201', 'x', '1.5'])
      expect((await stack.api.get(`/api/chat/sessions?limit=${limit}`, { token: a.token })).status).toBe(400);
    expect((await stack.api.get('/api/chat/sessions?limit=200', { token: a.token })).status).toBe(200);
    expect((await stack.api.get('/api/chat/sessions/not-a-uuid', { token: a.token })).status).toBe(400);
  });

  it('lists newest updated first with message counts and previews', async () => {
    const b = await signUp(stack.api);
    const first = await create({ title: 'first' }, b.token);
    const second = await create({ title: 'second' }, b.token);
    await create({ title: 'empty' }, b.token);
    await append(
      second.id,
      [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'y'.repeat(250) },
      ],
      b,
    );
    await append(
      first.id,
      [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'latest question' },
      ],
      b,
    );
    await append(first.id, [{ role: 'assistant', content: 'the answer' }], b);
    expect((await list(b.token)).map((s) => [s.title, s.message_count, s.last_message_preview])).toEqual([
      ['first', 3, 'the answer'],
      ['second', 2, 'y'.repeat(200)],
      ['empty', 0, ''],
    ]);
    const limited = await stack.api.get('/api/chat/sessions?limit=2', { token: b.token });
    expect(limited.body.sessions.map((s: { id: string }) => s.id)).toEqual([first.id, second.id]);
  });

  it('gets a session with its messages oldest first', async () => {
    const s = await create({ title: 'with messages' });
    const citations = [{ id: crypto.randomUUID(), type: 'memory' as const, title: 'a memory' }];
    await append(s.id, [
      { role: 'system', content: 'context' },
      { role: 'user', content: 'question' },
      { role: 'assistant', content: 'answer', citations },
    ]);
    const res = await stack.api.get(`/api/chat/sessions/${s.id}`, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: s.id,
      title: 'with messages',
      metadata: {},
      messages: expect.any(Array),
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
    expect(res.body.updated_at).toBeGreaterThan(res.body.created_at);
    expect(res.body.messages).toEqual([
      { role: 'system', content: 'context', citations: [], created_at: expect.any(Number) },
      { role: 'user', content: 'question', citations: [], created_at: expect.any(Number) },
      { role: 'assistant', content: 'answer', citations, created_at: expect.any(Number) },
    ]);
    expect((await stack.api.get(`/api/chat/sessions/${crypto.randomUUID()}`, { token: a.token })).status).toBe(404);
  });

  it('renames, validates the new title, and deletes', async () => {
    const s = await create();
    const renamed = await stack.api.patch(`/api/chat/sessions/${s.id}`, { token: a.token, body: { title: ' Renamed ' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ id: s.id, title: 'Renamed' });
    expect((await stack.api.get(`/api/chat/sessions/${s.id}`, { token: a.token })).body.title).toBe('Renamed');
    for (const body of [{}, { title: '' }, { title: 'x'.repeat(201) }])
      expect((await stack.api.patch(`/api/chat/sessions/${s.id}`, { token: a.token, body })).status).toBe(400);
    expect((await stack.api.patch(`/api/chat/sessions/${crypto.randomUUID()}`, { token: a.token, body: { title: 't' } })).status).toBe(404);

    await append(s.id, [{ role: 'user', content: 'doomed' }]);
    const deleted = await stack.api.delete(`/api/chat/sessions/${s.id}`, { token: a.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: true });
    expect((await stack.api.get(`/api/chat/sessions/${s.id}`, { token: a.token })).status).toBe(404);
    const again = await stack.api.delete(`/api/chat/sessions/${s.id}`, { token: a.token });
    expect(again.status).toBe(404);
    expect(again.body.error).toBe('not found');
    expect((await list()).map((x) => x.id)).not.toContain(s.id);
    await expect(append(s.id, [{ role: 'user', content: 'too late' }])).rejects.toMatchObject({ kind: 'not_found' });

    const actions = (await stack.api.get(`/api/events?action=chat.session.&target=${s.id}`, { token: a.token })).body.events.map(
      (e: { action: string }) => e.action,
    );
    expect(actions.sort()).toEqual(['chat.session.create', 'chat.session.delete', 'chat.session.update']);
  });

  it('keeps sessions private to their creator: other members and other orgs get 404', async () => {
    const owner = await signUp(stack.api);
    const bob = await signUp(stack.api);
    const outsider = await signUp(stack.api);
    expect(
      (await stack.api.post(`/api/orgs/${owner.org.id}/members`, { token: owner.token, body: { email: bob.user.email } })).status,
    ).toBe(201);
    const login = await stack.api.post('/api/auth/login', {
      body: { email: bob.user.email, password: bob.password, org_id: owner.org.id },
    });
    expect(login.status).toBe(200);
    const s = await create({ title: 'private' }, owner.token);

    const bobInOrg = { cookie: login.cookie! };
    expect((await stack.api.get('/api/chat/sessions', bobInOrg)).body.sessions).toEqual([]);
    for (const who of [bobInOrg, { token: outsider.token }, { token: bob.token }]) {
      expect((await stack.api.get(`/api/chat/sessions/${s.id}`, who)).status).toBe(404);
      expect((await stack.api.patch(`/api/chat/sessions/${s.id}`, { ...who, body: { title: 'mine now' } })).status).toBe(404);
      expect((await stack.api.delete(`/api/chat/sessions/${s.id}`, who)).status).toBe(404);
    }
    await expect(append(s.id, [{ role: 'user', content: 'intrusion' }], outsider)).rejects.toMatchObject({ kind: 'not_found' });
    expect(await list(outsider.token)).toEqual([]);
    const kept = await stack.api.get(`/api/chat/sessions/${s.id}`, { token: owner.token });
    expect(kept.body).toMatchObject({ title: 'private', messages: [] });
  });

  it('answers 401 without a credential', async () => {
    expect((await stack.api.get('/api/chat/sessions')).status).toBe(401);
    expect((await stack.api.post('/api/chat/sessions', { body: {} })).status).toBe(401);
    const id = crypto.randomUUID();
    expect((await stack.api.get(`/api/chat/sessions/${id}`)).status).toBe(401);
    expect((await stack.api.patch(`/api/chat/sessions/${id}`, { body: { title: 't' } })).status).toBe(401);
    expect((await stack.api.delete(`/api/chat/sessions/${id}`)).status).toBe(401);
  });
});

describe('appendTurns', () => {
  it("names a 'New chat' session after its first user message, once", async () => {
    const s = await create();
    await append(s.id, [{ role: 'system', content: 'you are helpful' }]);
    expect((await stack.api.get(`/api/chat/sessions/${s.id}`, { token: a.token })).body.title).toBe('New chat');
    const long = `  How do I\n\trotate   the keys?  ${'x'.repeat(100)}`;
    const expected = `How do I rotate the keys? ${'x'.repeat(54)}`;
    expect(expected).toHaveLength(80);
    const result = await append(s.id, [
      { role: 'user', content: long },
      { role: 'assistant', content: 'carefully' },
    ]);
    expect(result).toEqual({ id: s.id, title: expected });
    await append(s.id, [{ role: 'user', content: 'a later question' }]);
    expect((await stack.api.get(`/api/chat/sessions/${s.id}`, { token: a.token })).body.title).toBe(expected);
  });

  it('leaves a custom title alone, and a whitespace-only message does not name the session', async () => {
    const custom = await create({ title: 'My title' });
    await append(custom.id, [{ role: 'user', content: 'something else entirely' }]);
    expect((await stack.api.get(`/api/chat/sessions/${custom.id}`, { token: a.token })).body.title).toBe('My title');
    const blank = await create();
    await append(blank.id, [{ role: 'user', content: ' \n ' }]);
    expect((await stack.api.get(`/api/chat/sessions/${blank.id}`, { token: a.token })).body.title).toBe('New chat');
  });
});
