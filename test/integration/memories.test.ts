import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startStack, subscribeToMemoryEvents, type SignedUp, type Stack } from '../support/stack.ts';
import { query, sql } from '../../domain/sql.ts';
import { MAX_PARENT_REF } from '../../api/memories/schemas.ts';

let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  await subscribeToMemoryEvents(stack, a.org.id);
});
afterAll(async () => stack?.close());

const save = (body: unknown, token = a.token, headers?: Record<string, string>) =>
  stack.api.post('/api/memories', { token, body, headers });

describe('POST /api/memories', () => {
  it('creates a memory with defaults, an audit row and a memory.saved event', async () => {
    const res = await save({ content: 'The deploy key lives in the vault.' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      content: 'The deploy key lives in the vault.',
      namespace: 'default',
      tags: [],
      source: 'agent',
      source_ref: null,
      metadata: {},
    });
    expect(res.body.created_at).toBe(res.body.updated_at);
    const got = await stack.api.get(`/api/memories/${res.body.id}`, { token: a.token });
    expect(got.body).toEqual(res.body);
    const events = await stack.api.get(`/api/events?target=${res.body.id}`, { token: a.token });
    expect(events.body.events.map((e: { action: string }) => e.action)).toEqual(['memory.save']);
    const rows = await query(
      stack.orm.em.fork(),
      sql<{
        type: string;
        data: { id: string };
      }>`select type, data from events where org_id = ${a.org.id} and data->>'id' = ${res.body.id}`,
    );
    expect(rows).toEqual([{ type: 'memory.saved', data: expect.objectContaining({ id: res.body.id, content: res.body.content }) }]);
  });

  it('writes no event row for an org that no endpoint would deliver it to', async () => {
    const b = await signUp(stack.api);
    const res = await save({ content: 'nobody listens' }, b.token);
    expect(res.status).toBe(201);
    const rows = await query(stack.orm.em.fork(), sql<{ n: number }>`select count(*)::int as n from events where org_id = ${b.org.id}`);
    expect(rows[0]!.n).toBe(0);
  });

  it('keeps namespace, tags, source, source_ref and metadata; strips BYOK keys', async () => {
    const res = await save({
      content: 'x',
      namespace: ' proj-1 ',
      tags: [' a', 'b ', 'a'],
      source: 'cli',
      source_ref: 'conv-9',
      metadata: { k: 1, nested: { z: true }, byok_primary_key: 'sk-secret', byok_alternate_key: 'k2', history: ['forged'] },
    });
    expect(res.status).toBe(201);
    // Trimmed and de-duplicated, and the answer says so: it is the row as stored.
    expect(res.body).toMatchObject({
      namespace: 'proj-1',
      tags: ['a', 'b'],
      source: 'cli',
      source_ref: 'conv-9',
      metadata: { k: 1, nested: { z: true } },
    });
    expect((await stack.api.get(`/api/memories/${res.body.id}`, { token: a.token })).body).toMatchObject({
      namespace: 'proj-1',
      tags: ['a', 'b'],
    });
    expect(res.text).not.toContain('sk-secret');
    expect(res.body.metadata.history).toBeUndefined();
  });

  it('redacts secrets before storage and says so in metadata', async () => {
    const key = 'AKIA' + 'ABCDEFGHIJKLMNOP';
    const res = await save({ content: `aws key ${key} for the build` });
    expect(res.status).toBe(201);
    expect(res.body.content).not.toContain(key);
    expect(res.body.content).toContain('[REDACTED:');
    expect(res.body.metadata.redacted_count).toBe(1);
    expect(res.body.metadata.redacted_kinds).toEqual([expect.stringContaining('aws')]);
  });

  it('rejects bad input with the contract error strings', async () => {
    expect((await save({})).body.error).toBe('content required');
    // A content that is there but not text is not missing: it is a validation failure naming it.
    expect((await save({ content: 42 })).body).toMatchObject({ error: 'validation_failed', issues: [{ path: 'body.content' }] });
    expect((await save({ content: '   ' })).body.error).toBe('content required');
    const bad = await stack.api.post('/api/memories', { token: a.token, rawBody: '{"content":' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid json');
    expect((await save({ content: 'x', tags: 'no' })).status).toBe(400);
    expect((await save({ content: 'x', namespace: '' })).status).toBe(400);
    expect((await save({ content: 'x', metadata: [1] })).status).toBe(400);
    // A thread's key is indexed: one longer than an index entry holds is refused, not a 500.
    const longRef = await save({ content: 'x', metadata: { parent_ref: 'r'.repeat(MAX_PARENT_REF + 1) } });
    expect(longRef.status).toBe(400);
    expect(JSON.stringify(longRef.body)).toContain('parent_ref');
    // The most bytes a key of MAX_PARENT_REF characters can take (3 a character), and nothing to compress.
    const cjk = Array.from({ length: MAX_PARENT_REF }, () => String.fromCodePoint(0x4e00 + Math.floor(Math.random() * 20_000))).join('');
    const longest = await save({ content: 'x', metadata: { parent_ref: cjk } });
    expect(longest.status).toBe(201);
    expect(
      (
        await stack.api.patch(`/api/memories/${longest.body.id}`, {
          token: a.token,
          body: { metadata: { parent_ref: { nested: 'r'.repeat(3000) } } },
        })
      ).status,
    ).toBe(400);
    expect(
      (await stack.api.patch(`/api/memories/${longest.body.id}`, { token: a.token, body: { metadata: { parent_ref: null } } })).status,
    ).toBe(200);
  });

  it('accepts exactly 256 KiB of content and answers 413 memory_too_large above', async () => {
    const max = 'é'.repeat(131_072);
    const ok = await save({ content: max });
    expect(ok.status).toBe(201);
    expect(ok.body.content.length).toBe(131_072);
    const over = await save({ content: max + 'x' });
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ error: 'memory_too_large', max_bytes: 262_144, received_bytes: 262_145 });
  });

  it('replays the first answer for a repeated Idempotency-Key and creates nothing new', async () => {
    const key = `k-${Date.now()}`;
    const first = await save({ content: 'idempotent save' }, a.token, { 'idempotency-key': key });
    const again = await save({ content: 'idempotent save' }, a.token, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const list = await stack.api.post('/api/memories/list', { token: a.token, body: { metadata_filter: {}, limit: 500 } });
    expect(list.body.memories.filter((m: { content: string }) => m.content === 'idempotent save')).toHaveLength(1);
    const different = await save({ content: 'another body' }, a.token, { 'idempotency-key': key });
    expect(different.status).toBe(409);
    expect(different.body.error).toBe('idempotency_key_reused');
    const concurrent = `c-${Date.now()}`;
    const racers = await Promise.all([1, 2, 3].map(() => save({ content: 'racing save' }, a.token, { 'idempotency-key': concurrent })));
    expect(new Set(racers.map((r) => r.body.id)).size).toBe(1);
  });
});

describe('GET/PUT/PATCH/DELETE /api/memories/:id', () => {
  it('patches content with history, merges metadata, replaces tags and moves namespaces', async () => {
    const created = (await save({ content: 'first text', tags: ['x'], metadata: { keep: 1, drop: 2 } })).body;
    const patched = await stack.api.patch(`/api/memories/${created.id}`, {
      token: a.token,
      body: {
        content: 'second text',
        tags: ['y', 'z'],
        namespace: 'moved-here',
        metadata: { drop: null, added: 'yes', byok_primary_key: 'nope' },
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ content: 'second text', tags: ['y', 'z'], namespace: 'moved-here' });
    expect(patched.body.metadata).toMatchObject({ keep: 1, added: 'yes' });
    expect(patched.body.metadata.drop).toBeUndefined();
    expect(patched.body.metadata.byok_primary_key).toBeUndefined();
    expect(patched.body.metadata.history).toEqual([
      { at: expect.any(Number), prev_content_len: 10, by_user: a.user.id, by_token: a.tokenId },
    ]);
    expect(patched.body.updated_at).toBeGreaterThan(created.updated_at);
    expect(JSON.stringify(patched.body)).not.toContain('first text');

    const put = await stack.api.put(`/api/memories/${created.id}`, { token: a.token, body: { metadata: { more: true } } });
    expect(put.status).toBe(200);
    expect(put.body.metadata.history).toHaveLength(1);
    const same = await stack.api.put(`/api/memories/${created.id}`, { token: a.token, body: { content: 'second text' } });
    expect(same.body.metadata.history).toHaveLength(1);

    const history = await stack.api.get(`/api/memories/${created.id}/history`, { token: a.token });
    expect(history.body.edits).toHaveLength(1);
    expect(history.body.events.map((e: { action: string }) => e.action)).toEqual([
      'memory.save',
      'memory.update',
      'memory.update',
      'memory.update',
    ]);
    const projects = await query(
      stack.orm.em.fork(),
      sql<{ name: string }>`select name from namespaces where org_id = ${a.org.id} and name = 'moved-here'`,
    );
    expect(projects).toHaveLength(1);
  });

  it('answers 400 no patchable fields supplied for an empty body', async () => {
    const created = (await save({ content: 'x' })).body;
    const res = await stack.api.patch(`/api/memories/${created.id}`, { token: a.token, body: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('no patchable fields supplied');
  });

  it("answers 404 for another org's memory on every route, and for unknown ids", async () => {
    const b = await signUp(stack.api);
    const theirs = (await save({ content: 'private to b' }, b.token)).body;
    for (const res of [
      await stack.api.get(`/api/memories/${theirs.id}`, { token: a.token }),
      await stack.api.patch(`/api/memories/${theirs.id}`, { token: a.token, body: { content: 'hijack' } }),
      await stack.api.put(`/api/memories/${theirs.id}`, { token: a.token, body: { tags: [] } }),
      await stack.api.delete(`/api/memories/${theirs.id}`, { token: a.token }),
      await stack.api.get(`/api/memories/${theirs.id}/history`, { token: a.token }),
      await stack.api.get(`/api/memories/${crypto.randomUUID()}`, { token: a.token }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not found');
    }
    expect((await stack.api.get(`/api/memories/${theirs.id}`, { token: b.token })).body.content).toBe('private to b');
  });

  it('deletes, fires memory.deleted, and answers 204 again on retry', async () => {
    const created = (await save({ content: 'to be deleted', namespace: 'trash' })).body;
    expect((await stack.api.delete(`/api/memories/${created.id}`, { token: a.token })).status).toBe(204);
    expect((await stack.api.get(`/api/memories/${created.id}`, { token: a.token })).status).toBe(404);
    expect((await stack.api.delete(`/api/memories/${created.id}`, { token: a.token })).status).toBe(204);
    const rows = await query(
      stack.orm.em.fork(),
      sql<{ data: unknown }>`select data from events where type = 'memory.deleted' and data->>'id' = ${created.id}`,
    );
    expect(rows).toEqual([{ data: { id: created.id, namespace: 'trash' } }]);
    const search = await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'deleted' } });
    expect(search.body.hits.map((h: { id: string }) => h.id)).not.toContain(created.id);
  });
});
