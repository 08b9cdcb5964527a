import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database.ts';
import { signUp, startStack, type Stack } from '../support/stack.ts';

const LIMIT = 3;
let first: Stack;
let second: Stack;
beforeAll(async () => {
  const env = { WRITE_RATE_LIMIT_PER_MINUTE: String(LIMIT) };
  const databaseUrl = await createTestDatabase();
  [first, second] = await Promise.all([startStack({ env, databaseUrl }), startStack({ env, databaseUrl, worker: false, relay: false })]);
});
afterAll(async () => Promise.all([first?.close(), second?.close()]));

const createToken = (stack: Stack, token: string) => stack.api.post('/api/auth/tokens', { token, body: { name: 'x' } });

describe('write rate limit', () => {
  it('allows the limit per token, then answers 429 rate-limited with Retry-After in seconds', async () => {
    const a = await signUp(first.api);
    // Each answer that spent a slot says what is left (RateLimit-*), so a client can slow down before a 429.
    const left = (res: { headers: Headers }) => ['limit', 'remaining'].map((f) => res.headers.get(`ratelimit-${f}`));
    for (let i = 0; i < LIMIT; i++) {
      const res = await createToken(first, a.token);
      expect(res.status).toBe(201);
      expect(left(res)).toEqual([String(LIMIT), String(LIMIT - 1 - i)]);
      expect(Number(res.headers.get('ratelimit-reset'))).toSatisfy((s: number) => Number.isInteger(s) && s >= 1 && s <= 60);
    }
    const limited = await createToken(first, a.token);
    expect(limited.status).toBe(429);
    expect(left(limited)).toEqual([String(LIMIT), '0']);
    expect(limited.headers.get('ratelimit-reset')).toBe(limited.headers.get('retry-after'));
    expect(limited.body.error).toBe('rate-limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body.retry_after).toBe(retryAfter);
    // Nothing was written by the refused request.
    expect((await first.api.get('/api/auth/tokens', { token: a.token })).body).toHaveLength(1 + LIMIT);
  });

  it('does not limit reads', async () => {
    const a = await signUp(first.api);
    for (let i = 0; i < LIMIT; i++) await createToken(first, a.token);
    for (let i = 0; i < 10; i++) expect((await first.api.get('/api/auth/me', { token: a.token })).status).toBe(200);
  });

  it('keeps one window per token', async () => {
    const a = await signUp(first.api);
    const other = (await first.api.post('/api/auth/tokens', { cookie: a.cookie, body: { name: 'other' } })).body.raw as string;
    for (let i = 0; i < LIMIT; i++) await createToken(first, a.token);
    expect((await createToken(first, a.token)).status).toBe(429);
    expect((await createToken(first, other)).status).toBe(201);
  });

  it('is shared by every API process (the window lives in PostgreSQL)', async () => {
    const a = await signUp(first.api);
    expect((await createToken(first, a.token)).status).toBe(201);
    expect((await createToken(second, a.token)).status).toBe(201);
    expect((await createToken(first, a.token)).status).toBe(201);
    expect((await createToken(second, a.token)).status).toBe(429);
  });

  it('holds under concurrent writes: exactly the limit succeeds', async () => {
    const a = await signUp(first.api);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => createToken(i % 2 ? first : second, a.token)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(LIMIT);
    expect(results.filter((r) => r.status === 429)).toHaveLength(12 - LIMIT);
  });

  it('frees a slot once the oldest write leaves the rolling 60 s window', async () => {
    const a = await signUp(first.api);
    for (let i = 0; i < LIMIT; i++) await createToken(first, a.token);
    expect((await createToken(first, a.token)).status).toBe(429);
    // Age the recorded writes instead of waiting a minute.
    await first.orm.em
      .fork()
      .getConnection()
      .execute(`update rate_limit_windows set hits = array(select h - interval '61 seconds' from unnest(hits) h) where key = ?`, [
        `write:${a.tokenId}`,
      ]);
    expect((await createToken(first, a.token)).status).toBe(201);
  });
});

describe('read rate limit (READ_RATE_LIMIT_PER_SECOND)', () => {
  const READS = 5;
  let limited: Stack;
  beforeAll(async () => {
    limited = await startStack({ env: { READ_RATE_LIMIT_PER_SECOND: String(READS) }, worker: false, relay: false });
  });
  afterAll(async () => limited?.close());

  it('allows the limit per token in any second, counting each MCP tool call, then answers 429 with Retry-After', async () => {
    const a = await signUp(limited.api);
    const reads = await Promise.all(Array.from({ length: READS + 3 }, () => limited.api.get('/api/memories', { token: a.token })));
    expect(reads.filter((r) => r.status === 200)).toHaveLength(READS);
    const refused = reads.filter((r) => r.status !== 200);
    expect(refused.map((r) => [r.status, r.body.error, r.headers.get('retry-after')])).toEqual(
      Array.from({ length: 3 }, () => [429, 'rate-limited', '1']),
    );
    // A write spends no read.
    expect((await limited.api.post('/api/memories', { token: a.token, body: { content: 'written while reads were spent' } })).status).toBe(
      201,
    );

    await new Promise((r) => setTimeout(r, 1100));
    const batch = await fetch(new URL('/mcp', limited.baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(
        Array.from({ length: READS + 2 }, (_, id) => ({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'list_memories', arguments: {} },
        })),
      ),
    });
    const results = (await batch.json()) as { result: { isError?: boolean; _meta?: { status: number; error: string } } }[];
    expect(results.filter((r) => !r.result.isError)).toHaveLength(READS);
    expect(results.filter((r) => r.result.isError).map((r) => r.result._meta)).toEqual([
      expect.objectContaining({ status: 429, error: 'rate-limited' }),
      expect.objectContaining({ status: 429, error: 'rate-limited' }),
    ]);
  });
});
