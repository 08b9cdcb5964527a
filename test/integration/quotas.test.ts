import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bumpCounters } from '../../domain/counters.ts';
import { signUp, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(async () => stack?.close());

const save = (token: string, content = 'x') => stack.api.post('/api/memories', { token, body: { content } });
const setPlan = (orgId: string, plan: string) =>
  stack.orm.em.fork().getConnection().execute(`update orgs set plan = ? where id = ?`, [plan, orgId]);

describe('free plan quotas', () => {
  it('allows 500 memories over the lifetime of the org: deleting gives none back', async () => {
    const a = await signUp(stack.api);
    // Stand in for 498 earlier creations (the counters are what the check reads).
    await bumpCounters(stack.orm.em.fork(), [{ orgId: a.org.id, scopeId: a.org.id, name: 'memories_created', delta: 498 }]);
    const m1 = await save(a.token);
    expect(m1.status).toBe(201);
    expect((await stack.api.delete(`/api/memories/${m1.body.id}`, { token: a.token })).status).toBe(204);
    expect((await save(a.token)).status).toBe(201);
    const refused = await save(a.token);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({
      error: 'memory_quota_exceeded',
      quota: { used: 500, limit: 500, plan: 'free' },
      upgrade_url: expect.stringMatching(/^http/),
    });
  });

  it('stays exact under concurrent creates', async () => {
    const a = await signUp(stack.api);
    await bumpCounters(stack.orm.em.fork(), [{ orgId: a.org.id, scopeId: a.org.id, name: 'memories_created', delta: 495 }]);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => save(a.token, `concurrent ${i}`)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    expect(results.filter((r) => r.status === 402)).toHaveLength(7);
    const list = await stack.api.post('/api/memories/list', { token: a.token, body: {} });
    expect(list.body.total).toBe(5);
  });

  it('caps storage at 50 MiB held now, on create and on growing updates', async () => {
    const a = await signUp(stack.api);
    const limit = 50 * 1024 * 1024;
    await bumpCounters(stack.orm.em.fork(), [{ orgId: a.org.id, scopeId: a.org.id, name: 'stored_bytes', delta: limit - 1000 }]);
    const small = await save(a.token, 'a'.repeat(900));
    expect(small.status).toBe(201);
    const refused = await save(a.token, 'b'.repeat(200));
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ error: 'storage_quota_exceeded', quota: { used: limit - 100, limit, plan: 'free' } });
    const grow = await stack.api.patch(`/api/memories/${small.body.id}`, { token: a.token, body: { content: 'a'.repeat(1100) } });
    expect(grow.status).toBe(402);
    // Shorter content, with the history entry the edit adds to its metadata (which counts too): smaller in all.
    const shrink = await stack.api.patch(`/api/memories/${small.body.id}`, { token: a.token, body: { content: 'a' } });
    expect(shrink.status).toBe(200);
    expect((await save(a.token, 'c'.repeat(50))).status).toBe(201);
  });

  it("counts each memory's metadata in the storage, on create and on updates that grow it", async () => {
    const a = await signUp(stack.api);
    const limit = 50 * 1024 * 1024;
    await bumpCounters(stack.orm.em.fork(), [{ orgId: a.org.id, scopeId: a.org.id, name: 'stored_bytes', delta: limit - 200 }]);
    const metadata = { note: 'm'.repeat(100) };
    const saved = await stack.api.post('/api/memories', { token: a.token, body: { content: 'abc', metadata } });
    expect(saved.status).toBe(201);
    const held = 3 + Buffer.byteLength(JSON.stringify(saved.body.metadata));
    const usage = async () => (await stack.api.get('/api/billing', { token: a.token })).body.storage_bytes as number;
    expect(await usage()).toBe(limit - 200 + held);
    // Content that fits alone, with metadata that does not.
    const refused = await stack.api.post('/api/memories', { token: a.token, body: { content: 'x', metadata: { note: 'n'.repeat(200) } } });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toBe('storage_quota_exceeded');
    // Growing the metadata alone is checked too; shrinking it gives the bytes back.
    const grow = await stack.api.patch(`/api/memories/${saved.body.id}`, { token: a.token, body: { metadata: { more: 'g'.repeat(200) } } });
    expect(grow.status).toBe(402);
    const shrink = await stack.api.patch(`/api/memories/${saved.body.id}`, { token: a.token, body: { metadata: { note: null } } });
    expect(shrink.status).toBe(200);
    expect(await usage()).toBe(limit - 200 + 3);
  });

  it('does not apply to paid plans, and a plan change takes effect at once', async () => {
    const a = await signUp(stack.api);
    await bumpCounters(stack.orm.em.fork(), [{ orgId: a.org.id, scopeId: a.org.id, name: 'memories_created', delta: 500 }]);
    expect((await save(a.token)).status).toBe(402);
    await setPlan(a.org.id, 'team');
    expect((await save(a.token)).status).toBe(201);
    await setPlan(a.org.id, 'free');
    expect((await save(a.token)).status).toBe(402);
  });
});
