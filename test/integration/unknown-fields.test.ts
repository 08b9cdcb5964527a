import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// A body field or query parameter a route does not know answers 400 `unknown_field` naming it (with a hint for the
// common ones), at every depth the route's schema describes; `project` is read as `namespace`; mem0's and OAuth's
// routes ignore what their clients send beyond what we read, as those protocols ask.
let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

describe('fields a route does not know', () => {
  it('refuses a misspelt body field, naming it with the field it resembles, and saves nothing', async () => {
    const res = await stack.api.post('/api/memories', { token: a.token, body: { content: 'The deploy is on Friday', tgas: ['ops'] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unknown_field');
    expect(res.body.field).toBe('body.tgas');
    expect(res.body.message).toBe('body.tgas: not a field of this route (did you mean `tags`?)');
    expect(res.body.issues).toEqual([{ path: 'body.tgas', message: 'not a field of this route (did you mean `tags`?)' }]);
    const list = await stack.api.get('/api/memories', { token: a.token });
    expect(list.body).toHaveLength(0);
  });

  it('prefers naming an unknown field to reporting what is missing', async () => {
    const res = await stack.api.post('/api/memories', { token: a.token, body: { contnet: 'typo' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unknown_field');
    expect(res.body.message).toContain('did you mean `content`?');
    // With nothing unknown, the contract's code for a missing content stays.
    const missing = await stack.api.post('/api/memories', { token: a.token, body: {} });
    expect(missing.body.error).toBe('content required');
  });

  it('hints at how a route pages, or that it does not', async () => {
    const search = await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'deploy', limit: 5 } });
    expect(search.status).toBe(400);
    expect(search.body.issues[0]).toEqual({ path: 'body.limit', message: 'not a field of this route (the number of hits is `k`)' });
    const list = await stack.api.post('/api/memories/list', { token: a.token, body: { page: 2 } });
    expect(list.status).toBe(400);
    expect(list.body.issues[0].message).toBe('not a field of this route (this route pages with `limit` and `offset`)');
    const tokens = await stack.api.get('/api/auth/tokens?cursor=abc', { token: a.token });
    expect(tokens.status).toBe(400);
    expect(tokens.body).toMatchObject({ error: 'unknown_field', field: 'query.cursor' });
    expect(tokens.body.issues[0].message).toBe('not a field of this route (this route answers in one page)');
  });

  it('refuses an unknown query parameter, and a route without parameters refuses any', async () => {
    const list = await stack.api.get('/api/memories?nmaespace=x', { token: a.token });
    expect(list.status).toBe(400);
    expect(list.body).toMatchObject({ error: 'unknown_field', field: 'query.nmaespace' });
    expect(list.body.message).toContain('did you mean `namespace`?');
    const me = await stack.api.get('/api/auth/me?verbose=1', { token: a.token });
    expect(me.status).toBe(400);
    expect(me.body.field).toBe('query.verbose');
    // Bracketed lists name the same field as repeated parameters.
    expect((await stack.api.get('/api/memories?tags[]=a&tags[]=b', { token: a.token })).status).toBe(200);
  });

  it('looks into nested shapes: a filter clause, a batch item (failed alone, the others saved)', async () => {
    const filtered = await stack.api.post('/api/memories/search', {
      token: a.token,
      body: { query: 'deploy', filters: { AND: [{ tags: { in: ['ops'] } }] }, explain: true, options: { deep: true } },
    });
    expect(filtered.status).toBe(400);
    expect(filtered.body.field).toBe('body.options');
    const batch = await stack.api.post('/api/memories/batch', {
      token: a.token,
      body: { memories: [{ content: 'first' }, { content: 'second', namepsace: 'ops' }, { content: 'third' }] },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.created).toBe(2);
    expect(batch.body.failed).toEqual([
      expect.objectContaining({
        index: 1,
        status: 400,
        error: 'unknown_field',
        message: 'memories.1.namepsace: not a field of this route (did you mean `namespace`?)',
      }),
    ]);
  });

  it("reads `project` as `namespace`, the contract's other name for it", async () => {
    const saved = await stack.api.post('/api/memories', { token: a.token, body: { content: 'Filed under a project', project: 'ops' } });
    expect(saved.status).toBe(201);
    expect(saved.body.namespace).toBe('ops');
    const listed = await stack.api.get('/api/memories?project=ops', { token: a.token });
    expect(listed.body.map((m: { id: string }) => m.id)).toEqual([saved.body.id]);
    const both = await stack.api.post('/api/memories', { token: a.token, body: { content: 'x', project: 'ops', namespace: 'other' } });
    expect(both.status).toBe(400);
    expect(both.body.issues[0].path).toBe('body.project');
    const same = await stack.api.post('/api/memories', { token: a.token, body: { content: 'y', project: 'ops', namespace: 'ops' } });
    expect(same.status).toBe(201);
  });

  it("lets mem0's routes ignore what mem0's clients send beyond what we read", async () => {
    const res = await stack.api.post('/compat/mem0/v3/memories/search', {
      token: a.token,
      body: { query: 'deploy', user_id: 'u1', output_format: 'v1.1', org_id: 'o', project_id: 'p', some_new_field: true },
    });
    expect(res.status).toBe(200);
  });
});
