import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSchemaSource, SCHEMA_PATH } from '../../clients/typescript/generate.ts';
import {
  MemoryClient,
  MemoryServiceConnectionError,
  MemoryServiceError,
  unwrap,
  verifyWebhook,
} from '../../clients/typescript/src/index.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// The TypeScript client against the real stack.
let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  // With the model: the README example searches in hybrid mode.
  stack = await startStack({ relay: false, embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

describe('TypeScript client', () => {
  it('is typed from the OpenAPI document the service generates now (regenerate: node clients/typescript/generate.ts)', async () => {
    expect(await readFile(SCHEMA_PATH, 'utf8')).toBe(await clientSchemaSource());
  });

  it('saves, reads, updates, searches, pages through and deletes memories', async () => {
    const client = new MemoryClient({ baseUrl: stack.baseUrl, token: a.token });
    const saved = await client.addMemory({ content: 'Deploys to production happen on Tuesdays', namespace: 'client', tags: ['deploy'] });
    expect(saved).toMatchObject({ namespace: 'client', tags: ['deploy'] });
    expect((await client.getMemory(saved.id)).content).toBe('Deploys to production happen on Tuesdays');
    expect((await client.updateMemory(saved.id, { tags: ['deploy', 'ops'] })).tags).toEqual(['deploy', 'ops']);
    expect((await client.searchMemories({ query: 'deploys tuesdays', namespace: 'client' })).map((h) => h.id)).toEqual([saved.id]);
    for (let i = 0; i < 4; i++) await client.addMemory({ content: `paged memory ${i}`, namespace: 'client' });
    const seen: string[] = [];
    for await (const memory of client.listMemories({ namespace: 'client', limit: 2 })) seen.push(memory.id);
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    // Every route, typed, through `api`.
    const projects = await client.api.GET('/api/projects');
    expect(projects.data?.projects.map((p) => p.name)).toContain('client');
    // A list in a query string goes as the document describes it (tags=a&tags=b), and filters.
    const tagged = await client.api.GET('/api/memories', { params: { query: { namespace: 'client', tags: ['deploy', 'ops'] } } });
    expect(tagged.data?.map((m) => m.id)).toEqual([saved.id]);
    expect((await client.api.GET('/api/memories', { params: { query: { namespace: 'client', tags: ['deploy', 'nope'] } } })).data).toEqual(
      [],
    );
    // Memories like it need its vector, computed in the background, which this stack (no outbox relay) never starts.
    expect(await client.similarMemories(saved.id, { k: 3 }).catch((err: unknown) => err)).toMatchObject({
      status: 409,
      error: 'embedding_pending',
    });
    await client.deleteMemory(saved.id);
    const gone = await client.getMemory(saved.id).catch((err: unknown) => err);
    expect(gone).toBeInstanceOf(MemoryServiceError);
    expect(gone).toMatchObject({ status: 404, error: 'not found' });
  });

  it('retries a create whose answer was lost without making a second memory (its Idempotency-Key)', async () => {
    let lost = 0;
    // The first answer is lost on the way back, after the server did the work.
    const flaky: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (lost++ === 0) throw new TypeError('fetch failed: connection reset');
      return response;
    };
    const client = new MemoryClient({ baseUrl: stack.baseUrl, token: a.token, fetch: flaky });
    const saved = await client.addMemory({ content: 'created exactly once', namespace: 'idempotent' });
    const all = await stack.api.post('/api/memories/list', { token: a.token, body: { namespace: 'idempotent' } });
    expect(all.body.memories.map((m: { id: string }) => m.id)).toEqual([saved.id]);
  });

  it('waits Retry-After on 429 for any call up to maxRetryWait, and retries 5xx only when the call is safe to repeat', async () => {
    const calls: string[] = [];
    const scripted = (first: number, retryAfter = '1'): typeof fetch => {
      let n = 0;
      return async (input, init) => {
        const request = new Request(input, init);
        calls.push(`${request.method} ${new URL(request.url).pathname}`);
        if (n++ === 0)
          return new Response(JSON.stringify({ error: first === 429 ? 'rate-limited' : 'internal_error' }), {
            status: first,
            headers: { 'retry-after': retryAfter, 'content-type': 'application/json' },
          });
        return fetch(request);
      };
    };
    const limited = new MemoryClient({ baseUrl: stack.baseUrl, token: a.token, fetch: scripted(429) });
    await limited.api.POST('/api/recall', { body: { memory_ids: [crypto.randomUUID()] } });
    expect(calls).toEqual(['POST /api/recall', 'POST /api/recall']);

    // An hourly limit's wait is the caller's to decide on: the 429 comes back at once.
    calls.length = 0;
    const hourly = new MemoryClient({ baseUrl: stack.baseUrl, token: a.token, fetch: scripted(429, '3600') });
    expect((await hourly.api.POST('/api/recall', { body: { memory_ids: [crypto.randomUUID()] } })).response.status).toBe(429);
    expect(calls).toEqual(['POST /api/recall']);

    calls.length = 0;
    const failing = new MemoryClient({ baseUrl: stack.baseUrl, token: a.token, fetch: scripted(503) });
    const refused = await failing.api.POST('/api/recall', { body: { memory_ids: [crypto.randomUUID()] } });
    expect(refused.response.status).toBe(503);
    expect(calls).toHaveLength(1);

    calls.length = 0;
    const reading = new MemoryClient({ baseUrl: stack.baseUrl, token: a.token, fetch: scripted(503) });
    expect((await reading.api.GET('/api/projects')).response.status).toBe(200);
    expect(calls).toHaveLength(2);
  });

  it('throws MemoryServiceConnectionError when no answer comes, after the retries the call allows', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const unreachable = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const attempts: string[] = [];
    const counting: typeof fetch = (input, init) => {
      attempts.push(new Request(input, init).method);
      return fetch(input, init);
    };
    const client = new MemoryClient({ baseUrl: unreachable, token: a.token, maxRetries: 2, fetch: counting });
    const read = await client.getMemory(crypto.randomUUID()).catch((err: unknown) => err);
    expect(read).toBeInstanceOf(MemoryServiceConnectionError);
    expect(read).toBeInstanceOf(MemoryServiceError);
    expect(read).toMatchObject({
      status: 0,
      error: 'network_error',
      message: expect.stringContaining('ECONNREFUSED'),
      cause: expect.any(TypeError),
    });
    expect(attempts).toEqual(['GET', 'GET', 'GET']);
    // A write not safe to repeat goes once, and client.api throws the same error: there is no answer to return.
    attempts.length = 0;
    await expect(client.api.POST('/api/recall', { body: { memory_ids: [crypto.randomUUID()] } })).rejects.toBeInstanceOf(
      MemoryServiceConnectionError,
    );
    expect(attempts).toEqual(['POST']);
    // The caller's own abort stays an AbortError, and is not retried.
    attempts.length = 0;
    const aborted = await client.api.GET('/api/projects', { signal: AbortSignal.abort() }).catch((err: unknown) => err);
    expect(aborted).toMatchObject({ name: 'AbortError' });
    expect(aborted).not.toBeInstanceOf(MemoryServiceError);
    expect(attempts.length).toBeLessThanOrEqual(1);
  });

  it('throws typed errors with the extra fields, and verifies webhook signatures', async () => {
    const client = new MemoryClient({ baseUrl: stack.baseUrl, token: a.token });
    const invalid = (await client.addMemory({ content: 'x', tags: ['t'.repeat(500)] }).catch((err: unknown) => err)) as MemoryServiceError;
    expect(invalid).toMatchObject({ status: 400, error: 'validation_failed' });
    expect(invalid.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.stringContaining('tags') })]));
    expect(invalid.message).toBe(`validation_failed (HTTP 400): ${invalid.body.message}`);
    // An answer that is not the API's JSON (a proxy's page) keeps its text as the message.
    const proxy: typeof fetch = async () =>
      new Response('<html>502 Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } });
    const behindProxy = new MemoryClient({ baseUrl: stack.baseUrl, token: a.token, fetch: proxy });
    const bad = await unwrap(await behindProxy.api.POST('/api/recall', { body: { memory_ids: [] } })).catch((err: unknown) => err);
    expect(bad).toMatchObject({ status: 502, error: 'http_502', message: 'http_502 (HTTP 502): <html>502 Bad Gateway</html>' });

    const secret = `whsec_${Buffer.from('a webhook secret of enough length').toString('base64')}`;
    const body = JSON.stringify({ type: 'memory.saved', data: { id: 'm1' } });
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    const signature = new Webhook(secret).sign('msg_1', new Date(Number(headers['webhook-timestamp']) * 1000), body);
    expect(verifyWebhook(secret, body, { ...headers, 'webhook-signature': signature })).toEqual({
      type: 'memory.saved',
      data: { id: 'm1' },
    });
    expect(() => verifyWebhook(secret, body.replace('m1', 'm2'), { ...headers, 'webhook-signature': signature })).toThrow();
  });

  const examples = async (path: string) =>
    [...(await readFile(path, 'utf8')).matchAll(/```ts\n([\s\S]*?new MemoryClient[\s\S]*?)\n```/g)].map((m) => m[1]!);
  it.each([
    ['README.md', 0, "Riley's dog is called Biscuit"],
    ['README.md', 1, 'Deploys to production happen on Tuesdays'],
    ['clients/typescript/README.md', 0, 'Deploys to production happen on Tuesdays'],
  ])('runs the example of %s (%i)', async (path, index, printed) => {
    const example = (await examples(path))[index]!;
    const script = example
      .replace("from '@memory-service/client'", `from '${new URL('../../clients/typescript/src/index.ts', import.meta.url).pathname}'`)
      .replace("'http://127.0.0.1:3000'", `'${stack.baseUrl}'`)
      .replace("'svc_...'", `'${a.token}'`);
    const file = join(await mkdtemp(join(tmpdir(), 'readme-')), 'example.ts');
    await writeFile(file, script);
    // Run asynchronously: the API answering it lives in this process.
    const run = await promisify(execFile)(process.execPath, [file], { encoding: 'utf8', timeout: 30_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(printed);
  });
});
