import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bumpCounters } from '../../domain/counters.ts';
import { query, sql } from '../../domain/sql.ts';
import { signUp, startStack, subscribeToMemoryEvents, type SignedUp, type Stack } from '../support/stack.ts';

// POST /api/memories/batch: many saves in one call, each with the single save's semantics.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '3' } });
});
afterAll(async () => stack?.close());

const batch = (who: SignedUp, memories: unknown[], headers: Record<string, string> = {}) =>
  stack.api.post('/api/memories/batch', { token: who.token, body: { memories }, headers });
const setPlan = (orgId: string, plan: string) => query(stack.orm.em.fork(), sql`update orgs set plan = ${plan} where id = ${orgId}`);
const count = async (table: 'memories' | 'events' | 'audit_events', orgId: string, where = sql`true`) =>
  (
    await query(
      stack.orm.em.fork(),
      sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where org_id = ${orgId} and ${where}`,
    )
  )[0]!.n;

describe('POST /api/memories/batch', () => {
  it('saves every good item, reports each bad one by its index, and each saved one is found by its words at once', async () => {
    const a = await signUp(stack.api);
    await setPlan(a.org.id, 'team');
    await subscribeToMemoryEvents(stack, a.org.id);
    const res = await batch(a, [
      { content: 'The quarterly okapi census starts on Monday', tags: ['census'], namespace: 'wildlife' },
      { content: 'no content here', tags: 'not an array' },
      { tags: ['missing content'] },
      { content: 'x'.repeat(262_145) },
      {
        content: `Deploy key ${'AKIA' + 'ABCDEFGHIJKLMNOP'} goes in the vault`,
        metadata: { byok_primary_key: 'sk-ant-never-stored', kind: 'note' },
      },
      { content: 'The okapi feeding schedule moved to dawn', source: 'import', source_ref: 'row-6' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.created).toBe(3);
    expect(res.body.results.map((r: { index: number }) => r.index)).toEqual([0, 4, 5]);
    expect(res.body.results[0]).toMatchObject({
      content: 'The quarterly okapi census starts on Monday',
      namespace: 'wildlife',
      tags: ['census'],
    });
    expect(res.body.results[2]).toMatchObject({ source: 'import', source_ref: 'row-6' });
    // Redacted like a single save; the caller's key is used for the call only.
    expect(res.body.results[1].content).toContain('[REDACTED:');
    expect(res.body.results[1].metadata).toMatchObject({ kind: 'note', redacted_count: 1 });
    expect(res.body.results[1].metadata.byok_primary_key).toBeUndefined();
    expect(res.body.failed).toEqual([
      {
        index: 1,
        status: 400,
        error: 'validation_failed',
        message: expect.stringContaining('memories.1.tags'),
        issues: [expect.objectContaining({ path: 'memories.1.tags' })],
      },
      {
        index: 2,
        status: 400,
        error: 'content required',
        message: expect.stringContaining('memories.2.content'),
        issues: expect.any(Array),
      },
      { index: 3, status: 413, error: 'memory_too_large', message: expect.any(String), max_bytes: 262_144, received_bytes: 262_145 },
    ]);
    const found = await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'okapi' } });
    expect(found.body.hits.map((h: { id: string }) => h.id).sort()).toEqual([res.body.results[0].id, res.body.results[2].id].sort());
    // One memory.saved event and one audit row per memory, nothing for the failed items.
    expect(await count('memories', a.org.id)).toBe(3);
    expect(await count('events', a.org.id, sql`type = 'memory.saved'`)).toBe(3);
    expect(await count('audit_events', a.org.id, sql`action = 'memory.save'`)).toBe(3);
    expect((await stack.api.get('/api/memories/embeddings', { token: a.token })).body.total).toBe(3);
  });

  it('takes one write slot for the whole call', async () => {
    const a = await signUp(stack.api);
    const many = Array.from({ length: 20 }, (_, i) => ({ content: `note ${i}` }));
    for (let call = 0; call < 3; call++) expect((await batch(a, many)).status).toBe(200);
    expect(await count('memories', a.org.id)).toBe(60);
    const limited = await batch(a, many);
    expect(limited.status).toBe(429);
  });

  it("fails a free org's items past its quota one by one with 402, keeping the earlier ones", async () => {
    const a = await signUp(stack.api);
    await bumpCounters(stack.orm.em.fork(), [{ orgId: a.org.id, scopeId: a.org.id, name: 'memories_created', delta: 497 }]);
    const res = await batch(
      a,
      Array.from({ length: 5 }, (_, i) => ({ content: `free note ${i}` })),
    );
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { content: string }) => r.content)).toEqual(['free note 0', 'free note 1', 'free note 2']);
    expect(res.body.failed).toEqual(
      [3, 4].map((index) => ({
        index,
        status: 402,
        error: 'memory_quota_exceeded',
        message: expect.any(String),
        quota: { used: 500, limit: 500, plan: 'free' },
        upgrade_url: expect.stringMatching(/^http/),
      })),
    );
    expect(await count('memories', a.org.id)).toBe(3);
  });

  it('answers a repeat with the same Idempotency-Key with the first outcome and saves nothing more', async () => {
    const a = await signUp(stack.api);
    await setPlan(a.org.id, 'team');
    const items = [{ content: 'first of an idempotent batch' }, { content: '' }, { content: 'second of an idempotent batch' }];
    const first = await batch(a, items, { 'idempotency-key': 'batch-1' });
    expect(first.status).toBe(200);
    expect(first.body.created).toBe(2);
    const again = await batch(a, items, { 'idempotency-key': 'batch-1' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await count('memories', a.org.id)).toBe(2);
    const other = await batch(a, [{ content: 'another body' }], { 'idempotency-key': 'batch-1' });
    expect(other.status).toBe(409);
    expect(other.body.error).toBe('idempotency_key_reused');
  });

  it('refuses an empty batch and one over 500 items with 400 naming the limit', async () => {
    const a = await signUp(stack.api);
    const empty = await batch(a, []);
    expect(empty.status).toBe(400);
    expect(empty.body.issues[0].path).toBe('body.memories');
    const over = await batch(
      a,
      Array.from({ length: 501 }, () => ({ content: 'x' })),
    );
    expect(over.status).toBe(400);
    expect(over.body.message).toMatch(/body\.memories: .*500/);
    const notAnObject = await batch(a, ['just a string']);
    expect(notAnObject.status).toBe(400);
    expect(await count('memories', a.org.id)).toBe(0);
  });
});
