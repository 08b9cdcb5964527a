import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_INPUT_DEPTH } from '../../api/http/input-check.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// What no field may hold (a NUL, a lone UTF-16 surrogate, nesting past MAX_INPUT_DEPTH), anywhere in a path,
// a query or a body, is a 400 with `issues` naming where it is, and nothing is stored; PostgreSQL used to
// answer these with errors that became 500s.
let stack: Stack;
let user: SignedUp;
beforeAll(async () => {
  stack = await startStack({ relay: false });
  user = await signUp(stack.api);
});
afterAll(async () => stack?.close());

// As JSON text: JSON.stringify itself recurses, and cannot write 5,000 levels.
const nested = (levels: number): string => `${'{"a":'.repeat(levels)}"bottom"${'}'.repeat(levels)}`;

async function refused(res: { status: number; body: any }, path: string, message: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('validation_failed');
  expect(res.body.issues).toEqual(expect.arrayContaining([{ path, message: expect.stringMatching(message) }]));
}

describe('input no field may hold', () => {
  it('refuses a NUL or a lone surrogate in any string of a body, value or key, and stores nothing', async () => {
    const save = (body: Record<string, unknown>) =>
      stack.api.post('/api/memories', { token: user.token, body: { content: 'fine', ...body } });
    await refused(await save({ content: 'a\u0000b' }), 'body.content', /NUL/);
    await refused(await save({ content: 'a\ud800b' }), 'body.content', /surrogate/);
    await refused(await save({ tags: ['ok', '\udc00'] }), 'body.tags.1', /surrogate/);
    await refused(await save({ source_ref: 'x\u0000' }), 'body.source_ref', /NUL/);
    await refused(await save({ metadata: { nested: { list: ['\u0000'] } } }), 'body.metadata.nested.list.0', /NUL/);
    await refused(await save({ metadata: { 'k\u0000': 1 } }), 'body.metadata.k\u0000', /key must not contain the NUL/);
    expect((await stack.api.post('/api/memories/list', { token: user.token, body: {} })).body.total).toBe(0);

    await refused(
      await stack.api.post('/api/memories/search', { token: user.token, body: { query: 'deploy \ud83d' } }),
      'body.query',
      /surrogate/,
    );
    await refused(
      await stack.api.post('/api/memories/list', { token: user.token, body: { metadata_filter: { 'a\u0000': 1 } } }),
      'body.metadata_filter.a\u0000',
      /key/,
    );
    // A well-formed pair is text like any other.
    expect((await save({ content: 'ship it 🚀' })).status).toBe(201);
  });

  it('refuses them in path parameters and queries', async () => {
    for (const [url, path] of [
      ['/api/threads/a%00b', 'path.ref'],
      ['/api/procedural?q=%00', 'query.q'],
      ['/api/memories?q=deploy%00', 'query.q'],
    ]) {
      const res = await stack.api.get(url!, { token: user.token });
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      await refused(res, path!, /NUL/);
    }
  });

  it(`refuses nesting deeper than ${MAX_INPUT_DEPTH} levels before anything walks it, and takes it up to there`, async () => {
    const deep = await stack.api.post('/api/memories', { token: user.token, rawBody: `{"content": "deep", "metadata": ${nested(5_000)}}` });
    expect(deep.status).toBe(400);
    expect(deep.body.issues[0].message).toMatch(/deeper than 32 levels/);
    const filter = await stack.api.post('/api/memories/list', { token: user.token, rawBody: `{"metadata_filter": ${nested(5_000)}}` });
    expect(filter.status).toBe(400);
    // The body is level 1 and metadata level 2, so metadata may hold MAX_INPUT_DEPTH - 2 more levels.
    const ok = await stack.api.post('/api/memories', {
      token: user.token,
      rawBody: `{"content": "deep enough", "metadata": ${nested(MAX_INPUT_DEPTH - 2)}}`,
    });
    expect(ok.status).toBe(201);
  });

  it('refuses instants past the year 9999 in every filter, and takes the last millisecond of it', async () => {
    const tooLate = 253_402_300_800_000;
    const token = user.token;
    await refused(await stack.api.get(`/api/memories?created_before=${tooLate}`, { token }), 'query.created_before', /253402300799999/);
    await refused(
      await stack.api.get(`/api/memories?q=deploy&updated_after=${Number.MAX_SAFE_INTEGER}`, { token }),
      'query.updated_after',
      /253402300799999/,
    );
    await refused(
      await stack.api.post('/api/memories/list', { token, body: { created_after: tooLate } }),
      'body.created_after',
      /253402300799999/,
    );
    await refused(
      await stack.api.post('/api/memories/search', { token, body: { query: 'x', created_before: tooLate } }),
      'body.created_before',
      /253402300799999/,
    );
    await refused(
      await stack.api.post('/api/memories/search/bulk', { token, body: { queries: ['x'], created_before: tooLate } }),
      'body.created_before',
      /253402300799999/,
    );
    await refused(await stack.api.get(`/api/events?since=${tooLate}`, { token }), 'query.since', /253402300799999/);
    // An export whose filters could not run is refused when it is asked for, not failed later.
    await refused(
      await stack.api.post('/api/memories/exports', { token, body: { format: 'ndjson', filters: { created_before: tooLate } } }),
      'body.filters.created_before',
      /253402300799999/,
    );

    const last = tooLate - 1;
    expect((await stack.api.get(`/api/memories?created_before=${last}`, { token })).status).toBe(200);
    expect((await stack.api.post('/api/memories/list', { token, body: { created_before: last, updated_after: 0 } })).status).toBe(200);
    expect((await stack.api.post('/api/memories/search', { token, body: { query: 'ship', created_before: last } })).status).toBe(200);
    expect((await stack.api.get(`/api/events?until=${last}`, { token })).status).toBe(200);
  });
});
