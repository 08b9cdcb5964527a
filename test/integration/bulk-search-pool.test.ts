import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, lockWaiters, signUp, startStack, type Stack } from '../support/stack.ts';

// A pool of 4: bulk searches of all requests share one search slot (bulkSearchSlots), the rest is left to
// everything else.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { DATABASE_POOL_MAX: '4', WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(async () => stack?.close());

describe('bulk search and the connection pool', () => {
  it('never takes every connection: with its searches stuck in the database, a credential lookup still answers', async () => {
    const a = await signUp(stack.api);
    for (const word of ['alpha', 'beta', 'gamma', 'delta']) await stack.api.post('/api/memories', { token: a.token, body: { content: `${word} memory` } });
    const gate = new pg.Client({ connectionString: stack.config.DATABASE_URL });
    await gate.connect();
    const lockWaits = () => lockWaiters(stack);
    // Every search now waits in the database, holding its connection.
    await gate.query('begin; lock table lexical_staged in access exclusive mode');
    const bulks = Array.from({ length: 3 }, () =>
      stack.api.post('/api/memories/search/bulk', { token: a.token, body: { queries: ['alpha', 'beta', 'gamma', 'delta'], mode: 'lexical' } }),
    );
    try {
      await eventually(async () => (await lockWaits()) >= 1);
      const me = await Promise.race([stack.api.get('/api/auth/me', { token: a.token }), new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
      expect(me?.status).toBe(200);
      expect(await lockWaits()).toBe(1);
    } finally {
      await gate.query('commit');
      await gate.end();
    }
    for (const res of await Promise.all(bulks)) {
      expect(res.status).toBe(200);
      expect(res.body.results.map((r: { hits: unknown[] }) => r.hits.length)).toEqual([1, 1, 1, 1]);
    }
  });
});
