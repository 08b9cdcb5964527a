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
  const rows = await s.orm.em.fork().getConnection().execute(`select count(*)::int as n from credentials where user_id = ? and kind = 'api'`, [userId]);
  return rows[0]!.n;
};

describe('writes that ride on a cookie', () => {
  it('refuses a text/plain body with 415 instead of reading it as empty (no token minted)', async () => {
    const a = await signUp(stack.api);
    const before = await tokenCount(stack, a.user.id);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await stack.api.post('/api/auth/tokens', { cookie: a.cookie, rawBody: '{"name":"csrf"}', headers: { 'content-type': type } });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ error: 'unsupported_media_type', message: expect.stringContaining(type.split(';')[0]!) });
    }
    expect(await tokenCount(stack, a.user.id)).toBe(before);
    // The JSON family is read, and a route without a body takes none.
    const json = await stack.api.post('/api/auth/tokens', { cookie: a.cookie, rawBody: '{"name":"ok"}', headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(json.status).toBe(201);
    const bodiless = await stack.api.post('/api/memories', { token: a.token, rawBody: 'content=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(bodiless.status).toBe(415);
  });

  it('refuses a cookie write from another origin with 403 cross_site_request; its own pages and non-browsers pass', async () => {
    const a = await signUp(stack.api);
    const write = (headers: Record<string, string>, auth: { cookie?: string; token?: string } = { cookie: a.cookie }) =>
      stack.api.post('/api/memories', { ...auth, body: { content: 'cross-site probe' }, headers });

    const refused: Record<string, string>[] = [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site', origin: 'https://sub.memory.example.com' }, { origin: 'null' }];
    for (const headers of refused) {
      const res = await write(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body.error).toBe('cross_site_request');
    }
    const passing: Record<string, string>[] = [{ origin: 'https://memory.example.com' }, { 'sec-fetch-site': 'same-origin', origin: 'https://memory.example.com' }, { 'sec-fetch-site': 'none' }, {}];
    for (const headers of passing) {
      expect((await write(headers)).status, JSON.stringify(headers)).toBe(201);
    }
    // A bearer token is never sent by the browser on its own, so its origin does not matter.
    expect((await write({ origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, { token: a.token })).status).toBe(201);
    // Reads are not writes, even when they are POSTs.
    const read = await stack.api.get('/api/memories', { cookie: a.cookie, headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } });
    expect(read.status).toBe(200);
    const search = await stack.api.post('/api/memories/search', { cookie: a.cookie, body: { query: 'probe' }, headers: { origin: 'https://evil.example' } });
    expect(search.status).toBe(200);
    const stored = await stack.api.get('/api/memories?limit=50', { token: a.token });
    expect(stored.body.memories ?? stored.body.items ?? stored.body).toHaveLength(5);
  });

  it('guards local mode the same way: there the browser needs no credential at all', async () => {
    const denied = await local.api.post('/api/memories', { body: { content: 'from a page elsewhere' }, headers: { origin: 'https://evil.example' } });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('cross_site_request');
    const own = await local.api.post('/api/memories', { body: { content: 'from the dashboard' }, headers: { origin: local.api.baseUrl } });
    expect(own.status).toBe(201);
  });

  it('marks the session cookie Secure over https, and answers nosniff and no-store', async () => {
    const res = await stack.api.post('/api/auth/signup', { body: { email: uniqueEmail('secure'), password: 'correct horse battery', name: 'S', org_name: 'S' } });
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
