import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBundle } from '../../dashboard/bundle.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// Answers over 1 KiB go zstd-, brotli- or gzip-compressed to a client that accepts it, raw to one that does not; small
// answers and export downloads always raw.
let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  const memories = Array.from({ length: 40 }, (_, i) => ({
    content: `Note ${i}: the quarterly review moved to the second floor meeting room`,
  }));
  expect((await stack.api.post('/api/memories/batch', { token: a.token, body: { memories } })).body.created).toBe(40);
});
afterAll(async () => stack?.close());

// The raw bytes and headers, as the socket carried them (fetch would decompress).
function raw(
  path: string,
  encoding: string | null,
  token = a.token,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const url = new URL(path, stack.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { headers: { authorization: `Bearer ${token}`, ...(encoding ? { 'accept-encoding': encoding } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
const decoded = (r: { headers: Record<string, unknown>; body: Buffer }) =>
  r.headers['content-encoding'] === 'br'
    ? brotliDecompressSync(r.body)
    : r.headers['content-encoding'] === 'gzip'
      ? gunzipSync(r.body)
      : r.headers['content-encoding'] === 'zstd'
        ? zstdDecompressSync(r.body)
        : r.body;

describe('compressed answers', () => {
  it('compresses JSON answers, the OpenAPI document and the dashboard assets over 1 KiB for a client that accepts it', async () => {
    const plain = await raw('/api/memories?limit=40', null);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(1024);
    for (const [accept, encoding] of [
      ['br', 'br'],
      ['gzip', 'gzip'],
      ['gzip, deflate, br', 'br'],
      ['zstd', 'zstd'],
      // What Chromium sends.
      ['gzip, deflate, br, zstd', 'zstd'],
    ] as const) {
      const res = await raw('/api/memories?limit=40', accept);
      expect(res.headers['content-encoding'], accept).toBe(encoding);
      expect(res.headers.vary).toMatch(/accept-encoding/i);
      expect(res.body.length).toBeLessThan(plain.body.length / 2);
      expect(JSON.parse(decoded(res).toString())).toEqual(JSON.parse(plain.body.toString()));
    }
    const openapi = await raw('/api/openapi.json', 'gzip');
    expect(openapi.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decoded(openapi).toString()).openapi).toMatch(/^3\./);
    // The page's assets and every page's chunk, fetched later (dashboard/build.ts): those over 1 KiB compressed.
    const page = (await raw('/dashboard', null)).body.toString();
    const assets = new Set([...page.matchAll(/\/dashboard\/assets\/[\w-]+\.(?:js|css)/g)].map((m) => m[0]));
    for (const file of (await readBundle()).all().files) assets.add(`/dashboard/assets/${file}`);
    let compressed = 0;
    for (const asset of assets) {
      const res = await raw(asset, 'br');
      expect(res.status, asset).toBe(200);
      expect(res.headers['content-encoding'], asset).toBe(decoded(res).length > 1024 ? 'br' : undefined);
      if (res.headers['content-encoding']) compressed++;
    }
    expect(compressed).toBeGreaterThan(assets.size / 2);
  });

  it('sends small answers and export downloads as they are', async () => {
    const small = await raw('/api/billing', 'br');
    expect(small.body.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    const started = await stack.api.post('/api/memories/exports', { token: a.token, body: { format: 'ndjson' } });
    const done = await eventually(async () => {
      const res = await stack.api.get(`/api/memories/exports/${started.body.id}`, { token: a.token });
      return res.body.status === 'completed' && res.body;
    });
    const file = await raw(new URL(done.download_url).pathname, 'br, gzip');
    expect(file.status).toBe(200);
    expect(file.headers['content-encoding']).toBeUndefined();
    expect(file.body.toString()).toBe(done.payload);
  });
});
