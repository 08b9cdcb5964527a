import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, lockWaiters, signUp, startStack, type Stack } from '../support/stack.ts';

// A pool of 4: the searches of all requests share one search slot (search-slots.ts), the rest is left to
// everything else; the orgs take the slot in turn.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { DATABASE_POOL_MAX: '4', WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
});
afterAll(async () => stack?.close());

// Holds every search in the database (each waits for the lock on the staged postings) until released.
async function holdSearches(): Promise<{ release: () => Promise<void> }> {
  const gate = new pg.Client({ connectionString: stack.config.DATABASE_URL });
  await gate.connect();
  await gate.query('begin; lock table lexical_staged in access exclusive mode');
  return {
    release: async () => {
      await gate.query('commit');
      await gate.end();
    },
  };
}

describe('bulk search and the connection pool', () => {
  it('never takes every connection: with its searches stuck in the database, a credential lookup still answers', async () => {
    const a = await signUp(stack.api);
    for (const word of ['alpha', 'beta', 'gamma', 'delta'])
      await stack.api.post('/api/memories', { token: a.token, body: { content: `${word} memory` } });
    const lockWaits = () => lockWaiters(stack);
    // Every search now waits in the database, holding its connection.
    const held = await holdSearches();
    const bulks = Array.from({ length: 3 }, () =>
      stack.api.post('/api/memories/search/bulk', {
        token: a.token,
        body: { queries: ['alpha', 'beta', 'gamma', 'delta'], mode: 'lexical' },
      }),
    );
    try {
      await eventually(async () => (await lockWaits()) >= 1);
      const me = await Promise.race([
        stack.api.get('/api/auth/me', { token: a.token }),
        new Promise<null>((r) => setTimeout(() => r(null), 10_000)),
      ]);
      expect(me?.status).toBe(200);
      expect(await lockWaits()).toBe(1);
    } finally {
      await held.release();
    }
    for (const res of await Promise.all(bulks)) {
      expect(res.status).toBe(200);
      expect(res.body.results.map((r: { hits: unknown[] }) => r.hits.length)).toEqual([1, 1, 1, 1]);
    }
  });
});

describe('search slots shared by the orgs in turn', () => {
  it("refuses an org's searches past its own queue with 429, and serves another org's after at most one more of its own", async () => {
    const [a, b] = [await signUp(stack.api), await signUp(stack.api)];
    for (const org of [a, b]) await stack.api.post('/api/memories', { token: org.token, body: { content: 'alpha memory' } });
    const held = await holdSearches();
    const finished: string[] = [];
    const search = (org: typeof a, name: string) =>
      stack.api.post('/api/memories/search', { token: org.token, body: { query: 'alpha', mode: 'lexical' } }).then((res) => {
        finished.push(name);
        return res;
      });
    let flood: ReturnType<typeof search>[] = [];
    let quiet: ReturnType<typeof search>;
    try {
      // One slot: a's first search holds it in the database, 16 wait in a's queue, the rest are refused at once.
      flood = Array.from({ length: 20 }, (_, i) => search(a, `a${i}`));
      await eventually(async () => (await lockWaiters(stack)) >= 1 && finished.length === 3);
      // Over MCP, each tool call of a JSON-RPC batch is a search of its own: a's queue is full for every one.
      const batch = await fetch(new URL('/mcp', stack.baseUrl), {
        method: 'POST',
        headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(
          Array.from({ length: 5 }, (_, i) => ({
            jsonrpc: '2.0',
            id: i,
            method: 'tools/call',
            params: { name: 'search_memories', arguments: { query: 'alpha' } },
          })),
        ),
      });
      const results = (await batch.json()) as { result: { isError?: boolean; _meta?: { status: number; error: string } } }[];
      expect(results.map((r) => r.result._meta)).toEqual(
        Array.from({ length: 5 }, () => expect.objectContaining({ status: 429, error: 'rate-limited' })),
      );
      quiet = search(b, 'b');
    } finally {
      await held.release();
    }
    const refused = (await Promise.all(flood)).filter((res) => res.status !== 200);
    expect(refused.map((res) => [res.status, res.body.error, res.headers.get('retry-after')])).toEqual(
      Array.from({ length: 3 }, () => [429, 'rate-limited', '1']),
    );
    expect((await quiet).status).toBe(200);
    expect((await quiet).body.hits).toHaveLength(1);
    // b waited for the search under way and at most one more of a's (the one whose turn came first), not for a's
    // queue of 16 (its answer may reach the client just after the next of a's).
    const served = finished.slice(3);
    expect(served.indexOf('b')).toBeLessThanOrEqual(3);
  });
});

describe("an MCP request's tool calls", () => {
  it('reach the API one at a time: a JSON-RPC batch of three reads waits in the database one read at a time', async () => {
    const a = await signUp(stack.api);
    const saved = await stack.api.post('/api/memories', { token: a.token, body: { content: 'alpha memory' } });
    // Every read of a memory now waits for the lock.
    const gate = new pg.Client({ connectionString: stack.config.DATABASE_URL });
    await gate.connect();
    await gate.query('begin; lock table memories in access exclusive mode');
    let answered: Promise<Response> | undefined;
    try {
      answered = fetch(new URL('/mcp', stack.baseUrl), {
        method: 'POST',
        headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(
          Array.from({ length: 3 }, (_, id) => ({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: { name: 'get_memory', arguments: { id: saved.body.id } },
          })),
        ),
      });
      await eventually(async () => (await lockWaiters(stack)) >= 1);
      // Time enough for the other two to reach the lock, were they sent at once.
      await new Promise((r) => setTimeout(r, 500));
      expect(await lockWaiters(stack)).toBe(1);
    } finally {
      await gate.query('commit');
      await gate.end();
    }
    const results = (await (await answered!).json()) as { result: { isError?: boolean; structuredContent?: { id: string } } }[];
    expect(results.map((r) => [r.result.isError ?? false, r.result.structuredContent?.id])).toEqual(
      Array.from({ length: 3 }, () => [false, saved.body.id]),
    );
  });
});
