import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bumpCounters } from '../../domain/counters.ts';
import { query, sql } from '../../domain/sql.ts';
import { ORG_COUNTERS } from '../../domain/store/counters.ts';
import { signUp, startStack, subscribeToMemoryEvents, type SignedUp, type Stack } from '../support/stack.ts';

// POST /api/conversations: a conversation's messages saved as the next chunks of its thread, all or nothing.
let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  await subscribeToMemoryEvents(stack, a.org.id);
});
afterAll(async () => stack?.close());

const capture = (body: Record<string, unknown>, token = a.token, headers: Record<string, string> = {}) =>
  stack.api.post('/api/conversations', { token, body, headers });
const memoryCount = async (orgId: string) =>
  (await query(stack.orm.em.fork(), sql<{ n: number }>`select count(*)::int as n from memories where org_id = ${orgId}`))[0]!.n;
const MAY = Date.UTC(2026, 4, 1, 12, 0);

describe('conversation capture', () => {
  it("saves each message as the next chunk of the run's thread, with its role, name and time", async () => {
    const first = await capture({
      user_id: 'dana',
      run_id: 'support-42',
      tags: ['support'],
      metadata: { channel: 'chat' },
      messages: [
        { role: 'user', content: 'My flight to Lisbon leaves on Friday', name: 'Dana', occurred_at: MAY },
        { role: 'assistant', content: 'Noted: Lisbon on Friday. Window or aisle?', occurred_at: MAY + 1000 },
        { role: 'user', content: 'Window, always', occurred_at: MAY + 2000 },
      ],
    });
    expect(first.status).toBe(201);
    expect(first.body.conversation_id).toBe('support-42');
    expect(first.body.memories.map((m: { metadata: Record<string, unknown> }) => m.metadata)).toEqual([
      { channel: 'chat', role: 'user', name: 'Dana', parent_ref: 'support-42', chunk_index: 0 },
      { channel: 'chat', role: 'assistant', parent_ref: 'support-42', chunk_index: 1 },
      { channel: 'chat', role: 'user', parent_ref: 'support-42', chunk_index: 2 },
    ]);
    expect(first.body.memories[0]).toMatchObject({
      source: 'conversation',
      user_id: 'dana',
      run_id: 'support-42',
      tags: ['support'],
      occurred_at: MAY,
    });
    const next = await capture({
      run_id: 'support-42',
      user_id: 'dana',
      messages: [{ role: 'assistant', content: 'Booked a window seat to Lisbon' }],
    });
    expect(next.body.memories[0].metadata.chunk_index).toBe(3);
    expect(next.body.memories[0].occurred_at).toBe(next.body.memories[0].created_at);

    const thread = await stack.api.get('/api/threads/support-42', { token: a.token });
    expect(thread.body.chunks.map((c: { content: string }) => c.content)).toEqual([
      'My flight to Lisbon leaves on Friday',
      'Noted: Lisbon on Friday. Window or aisle?',
      'Window, always',
      'Booked a window seat to Lisbon',
    ]);
    const found = await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'window seat Lisbon', user_id: 'dana' } });
    expect(found.body.hits.length).toBeGreaterThan(0);
    const [events] = await query(
      stack.orm.em.fork(),
      sql<{
        n: number;
      }>`select count(*)::int as n from events where org_id = ${a.org.id} and type = 'memory.saved'
          and data->'metadata'->>'parent_ref' = 'support-42'`,
    );
    expect(events!.n).toBe(4);
  });

  it('gives a conversation without an id a new one, and keeps chunk indexes apart under concurrent calls', async () => {
    const fresh = await capture({ messages: [{ role: 'user', content: 'hello there' }] });
    expect(fresh.body.conversation_id).toMatch(/^conv_/);
    const calls = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        capture({
          conversation_id: 'busy',
          messages: [
            { role: 'user', content: `turn ${i} a` },
            { role: 'assistant', content: `turn ${i} b` },
          ],
        }),
      ),
    );
    expect(calls.every((c) => c.status === 201)).toBe(true);
    const indexes = calls.flatMap((c) => c.body.memories.map((m: { metadata: { chunk_index: number } }) => m.metadata.chunk_index));
    expect(indexes.sort((x, y) => x - y)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    // Each call's messages stay together and in order.
    for (const c of calls) expect(c.body.memories[1].metadata.chunk_index).toBe(c.body.memories[0].metadata.chunk_index + 1);
  });

  it('answers a repeat with the same Idempotency-Key with the first outcome, saving nothing again', async () => {
    const body = { conversation_id: 'once', messages: [{ role: 'user', content: 'only once' }] };
    const first = await capture(body, a.token, { 'idempotency-key': 'conv-once' });
    const again = await capture(body, a.token, { 'idempotency-key': 'conv-once' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await stack.api.get('/api/threads/once', { token: a.token })).body.chunks).toHaveLength(1);
  });

  it('refuses bad messages whole, naming them, and saves nothing', async () => {
    const before = await memoryCount(a.org.id);
    const cases: [Record<string, unknown>, number, string][] = [
      [{ messages: [] }, 400, 'body.messages'],
      [{ messages: [{ role: 'narrator', content: 'x' }] }, 400, 'body.messages.0.role'],
      [{ messages: [{ role: 'user' }] }, 400, 'body.messages.0.content'],
      [{ messages: [{ role: 'user', content: 'ok', occurred_at: -1 }] }, 400, 'body.messages.0.occurred_at'],
      [{ messages: [{ role: 'user', content: 'ok' }], infer: 'yes' }, 400, 'body.infer'],
      [{ messages: [{ role: 'user', content: 'ok' }], user_id: '' }, 400, 'body.user_id'],
      [{ messages: Array.from({ length: 501 }, () => ({ role: 'user', content: 'x' })) }, 400, 'body.messages'],
    ];
    for (const [body, status, path] of cases) {
      const res = await capture(body);
      expect(res.status, path).toBe(status);
      expect(
        res.body.issues.map((i: { path: string }) => i.path),
        path,
      ).toContain(path);
    }
    const empty = await capture({
      messages: [
        { role: 'user', content: 'fine' },
        { role: 'user', content: '   ' },
      ],
    });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/^messages\.1: /);
    const large = await capture({
      messages: [
        { role: 'user', content: 'fine' },
        { role: 'user', content: 'x'.repeat(300_000) },
      ],
    });
    expect(large.status).toBe(413);
    expect(large.body.message).toMatch(/^messages\.1: /);
    expect(await memoryCount(a.org.id)).toBe(before);
  });

  it('refuses on the free plan a conversation the quota cannot hold whole, and saves one it can', async () => {
    const free = await signUp(stack.api);
    // As if 498 memories had been saved: two places are left.
    await bumpCounters(stack.orm.em.fork(), [{ orgId: free.org.id, scopeId: free.org.id, name: ORG_COUNTERS.created, delta: 498 }]);
    const three = await capture({ messages: ['a', 'b', 'c'].map((content) => ({ role: 'user', content })) }, free.token);
    expect(three.status).toBe(402);
    expect(three.body.error).toBe('memory_quota_exceeded');
    expect(await memoryCount(free.org.id)).toBe(0);
    const two = await capture({ messages: ['a', 'b'].map((content) => ({ role: 'user', content })) }, free.token);
    expect(two.status).toBe(201);
    expect(await memoryCount(free.org.id)).toBe(2);
  });
});
