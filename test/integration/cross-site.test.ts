import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, startStack, uniqueEmail, type Stack } from '../support/stack.ts';

// A cookie is sent by the browser on its own: a page on another site must not be able to write with it.
let stack: Stack;
let local: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { PUBLIC_BASE_URL: 'https://memory.example.com', TRUSTED_PROXIES: '0' } });
  local = await startStack({ relay: false, worker: false, env: { SERVICE_MODE: 'local' } });
});
afterAll(async () => Promise.all([stack?.close(), local?.close()]));

const tokenCount = async (s: Stack, userId: string): Promise<number> => {
  const rows = await s.orm.em
    .fork()
    .getConnection()
    .execute(`select count(*)::int as n from credentials where user_id = ? and kind = 'api'`, [userId]);
  return rows[0]!.n;
};

describe('writes that ride on a cookie', () => {
  it('refuses a text/plain body with 415 instead of reading it as empty (no token minted)', async () => {
    const a = await signUp(stack.api);
    const before = await tokenCount(stack, a.user.id);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await stack.api.post('/api/auth/tokens', {
        cookie: a.cookie,
        rawBody: '{"name":"csrf"}',
        headers: { 'content-type': type },
      });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ error: 'unsupported_media_type', message: expect.stringContaining(type.split(';')[0]!) });
    }
    expect(await tokenCount(stack, a.user.id)).toBe(before);
    // The JSON family is read, and a route without a body takes none.
    const json = await stack.api.post('/api/auth/tokens', {
      cookie: a.cookie,
      rawBody: '{"name":"ok"}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(json.status).toBe(201);
    const bodiless = await stack.api.post('/api/memories', {
      token: a.token,
      rawBody: 'content=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(bodiless.status).toBe(415);
  });

  it('refuses a cookie write from another origin with 403 cross_site_request; its own pages and non-browsers pass', async () => {
    const a = await signUp(stack.api);
    const write = (headers: Record<string, string>, auth: { cookie?: string; token?: string } = { cookie: a.cookie }) =>
      stack.api.post('/api/memories', { ...auth, body: { content: 'cross-site probe' }, headers });

    const refused: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site', origin: 'https://sub.memory.example.com' },
      { origin: 'null' },
    ];
    for (const headers of refused) {
      const res = await write(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body.error).toBe('cross_site_request');
    }
    const passing: Record<string, string>[] = [
      { origin: 'https://memory.example.com' },
      { 'sec-fetch-site': 'same-origin', origin: 'https://memory.example.com' },
      { 'sec-fetch-site': 'none' },
      {},
    ];
    for (const headers of passing) {
      expect((await write(headers)).status, JSON.stringify(headers)).toBe(201);
    }
    // A bearer token is never sent by the browser on its own, so its origin does not matter.
    expect((await write({ origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, { token: a.token })).status).toBe(201);
    // Reads are not writes, even when they are POSTs.
    const read = await stack.api.get('/api/memories', {
      cookie: a.cookie,
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(read.status).toBe(200);
    const search = await stack.api.post('/api/memories/search', {
      cookie: a.cookie,
      body: { query: 'probe' },
      headers: { origin: 'https://evil.example' },
    });
    expect(search.status).toBe(200);
    const stored = await stack.api.get('/api/memories?limit=50', { token: a.token });
    expect(stored.body.memories ?? stored.body.items ?? stored.body).toHaveLength(5);
  });

  it('guards local mode the same way: there the browser needs no credential at all', async () => {
    const denied = await local.api.post('/api/memories', {
      body: { content: 'from a page elsewhere' },
      headers: { origin: 'https://evil.example' },
    });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('cross_site_request');
    const own = await local.api.post('/api/memories', { body: { content: 'from the dashboard' }, headers: { origin: local.api.baseUrl } });
    expect(own.status).toBe(201);
  });

  it('answers only to its own host names in every mode (DNS rebinding), before any route runs', async () => {
    const a = await signUp(stack.api);
    const port = new URL(local.baseUrl).port;
    // A page on evil.example whose name now points at 127.0.0.1 is same-origin to the browser: only its Host differs.
    const rebound = { host: `evil.example:${port}`, 'sec-fetch-site': 'same-origin', origin: `http://evil.example:${port}` };
    for (const [target, path] of [
      [local, '/api/memories'],
      [local, '/healthz'],
      [stack, '/api/auth/me'],
      [stack, '/nowhere'],
    ] as const) {
      const res = await target.api.get(path, { headers: rebound, cookie: a.cookie });
      expect(res.status, path).toBe(403);
      expect(res.body).toMatchObject({ error: 'host_not_allowed', message: expect.stringContaining('ALLOWED_HOSTS') });
    }
    const write = await local.api.post('/api/memories', { body: { content: 'rebound' }, headers: rebound });
    expect(write.body.error).toBe('host_not_allowed');
    const mcp = await local.api.post('/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { ...rebound, accept: 'application/json, text/event-stream' },
    });
    expect(mcp.status).toBe(403);
    expect((await local.api.get('/api/memories?limit=50')).body.map((m: { content: string }) => m.content)).not.toContain('rebound');
    // The public name (with or without its default port) and the loopback names pass, names compared case-insensitively.
    for (const host of ['memory.example.com', 'Memory.Example.com:443', `localhost:${port}`, `[::1]:${port}`]) {
      expect((await stack.api.get('/api/auth/me', { headers: { host }, cookie: a.cookie })).status, host).toBe(200);
    }
    expect((await stack.api.get('/api/auth/me', { headers: { host: 'memory.example.com:8443' }, cookie: a.cookie })).status).toBe(403);
  });

  it('takes the host names of ALLOWED_HOSTS instead of the loopback ones', async () => {
    const own = await startStack({ relay: false, worker: false, env: { ALLOWED_HOSTS: 'api.internal, 127.0.0.1' } });
    try {
      const port = new URL(own.baseUrl).port;
      expect((await own.api.get('/healthz', { headers: { host: `api.internal:${port}` } })).status).toBe(200);
      expect((await own.api.get('/healthz', { headers: { host: `localhost:${port}` } })).status).toBe(403);
    } finally {
      await own.close();
    }
  });

  it('refuses every browser call from another site in local mode, reads and /mcp included, but follows links', async () => {
    const elsewhere = { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' };
    const read = await local.api.get('/api/memories', { headers: elsewhere });
    expect(read.status).toBe(403);
    expect(read.body.error).toBe('cross_site_request');
    const search = await local.api.post('/api/memories/search', {
      body: { query: 'dashboard' },
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' },
    });
    expect(search.status).toBe(403);
    const mcp = await local.api.post('/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { origin: 'https://evil.example', accept: 'application/json, text/event-stream' },
    });
    expect(mcp.status).toBe(403);
    // A link followed from elsewhere opens the dashboard; its own pages and non-browsers read as before.
    const link = await local.api.get('/dashboard', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } });
    expect(link.status).toBe(200);
    expect((await local.api.get('/api/memories', { headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' } })).status).toBe(
      200,
    );
    expect((await local.api.get('/api/memories')).status).toBe(200);
    // The hosted stack keeps reads open to bearer tokens from anywhere.
    const a = await signUp(stack.api);
    expect((await stack.api.get('/api/memories', { token: a.token, headers: elsewhere })).status).toBe(200);
  });

  it('marks the session cookie Secure over https, and answers nosniff and no-store', async () => {
    const res = await stack.api.post('/api/auth/signup', {
      body: { email: uniqueEmail('secure'), password: 'correct horse battery', name: 'S', org_name: 'S' },
    });
    expect(res.status).toBe(201);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    expect(cookie).toMatch(/; secure/i);
    expect(cookie).toMatch(/; httponly/i);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const notFound = await stack.api.get('/nowhere');
    expect(notFound.headers.get('x-content-type-options')).toBe('nosniff');
    // A route may still choose to be cached: the docs page's static assets are.
    const asset = await stack.api.get('/api/docs/swagger-ui.css');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=86400');
  });
});
