import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../domain/accounts/caller.ts';
import { readCounters } from '../../domain/counters.ts';
import { newId } from '../../domain/ids.ts';
import { NO_SCOPES, type MemoryView } from '../../domain/store/model.ts';
import { SaveBatcher } from '../../domain/memories/save-batch.ts';
import { query, sql } from '../../domain/sql.ts';
import { signUp, startStack, subscribeToMemoryEvents, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(async () => stack?.close());

const memory = (content: string, id = newId()): MemoryView => ({
  id,
  content,
  namespace: 'batched',
  tags: ['t'],
  source: 'agent',
  sourceRef: null,
  metadata: {},
  createdAt: Date.now(),
  updatedAt: Date.now(),
  occurredAt: Date.now(),
  ...NO_SCOPES,
});

describe('SaveBatcher (group commit of saves)', () => {
  it('writes concurrent saves in shared statements with exact counters, events and audit rows', async () => {
    const a = await signUp(stack.api);
    await subscribeToMemoryEvents(stack, a.org.id);
    const caller: Caller = {
      userId: a.user.id,
      orgId: a.org.id,
      role: 'owner',
      plan: 'team',
      credentialId: a.tokenId,
      credentialKind: 'api',
    };
    const em = stack.orm.em.fork();
    const batcher = new SaveBatcher(() => stack.orm.em.fork(), 2, 16);
    const saves = Array.from({ length: 100 }, (_, i) => memory(`group commit number ${i} zebra`));
    await Promise.all(saves.map((m) => batcher.save({ caller, memory: m, bytes: Buffer.byteLength(m.content) })));

    const counters = await readCounters(em, a.org.id);
    expect(counters.get('memories')).toBe(100);
    expect(counters.get('memories_created')).toBe(100);
    expect(counters.get('stored_bytes')).toBe(saves.reduce((s, m) => s + Buffer.byteLength(m.content), 0));
    const [events] = await query(
      em,
      sql<{ n: number }>`select count(*)::int as n from events where org_id = ${a.org.id} and type = 'memory.saved'`,
    );
    const [audits] = await query(
      em,
      sql<{ n: number }>`select count(*)::int as n from audit_events where org_id = ${a.org.id} and action = 'memory.save'`,
    );
    expect(events!.n).toBe(100);
    expect(audits!.n).toBe(100);
    const hits = await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'zebra', k: 50 } });
    expect(hits.body.hits).toHaveLength(50);
  });

  it('retries a failed batch save by save, so one bad save fails alone', async () => {
    const a = await signUp(stack.api);
    const caller: Caller = {
      userId: a.user.id,
      orgId: a.org.id,
      role: 'owner',
      plan: 'team',
      credentialId: a.tokenId,
      credentialKind: 'api',
    };
    const existing = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'already here' } })).body.id as string;
    // One busy slot so that the next saves queue up and go as one batch.
    const batcher = new SaveBatcher(() => stack.orm.em.fork(), 1, 16);
    const first = batcher.save({ caller, memory: memory('first'), bytes: 5 });
    const good = [memory('good one'), memory('good two')];
    const results = await Promise.allSettled([
      first,
      batcher.save({ caller, memory: good[0]!, bytes: 8 }),
      batcher.save({ caller, memory: memory('duplicate id', existing), bytes: 12 }),
      batcher.save({ caller, memory: good[1]!, bytes: 8 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    for (const m of good) expect((await stack.api.get(`/api/memories/${m.id}`, { token: a.token })).status).toBe(200);
    expect((await readCounters(stack.orm.em.fork(), a.org.id)).get('memories')).toBe(4);
  });
});
