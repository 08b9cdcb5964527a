import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bumpCounters } from '../../domain/counters.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// The official MCP client against the real server at /mcp, over Streamable HTTP.
let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '5' } });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

async function connect(token?: string): Promise<Client> {
  const client = new Client({ name: 'memory-service-tests', version: '1.0.0' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', stack.baseUrl), { requestInit: { headers } }));
  return client;
}

const text = (result: { content?: unknown }) => (result.content as { type: string; text: string }[])[0]?.text ?? '';

describe('MCP server at /mcp', () => {
  it('lists the memory tools with input and output schemas and read-only / destructive annotations', async () => {
    const client = await connect(a.token);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual([
      'add_memory',
      'delete_memory',
      'find_runbooks',
      'find_similar_memories',
      'get_memory',
      'list_memories',
      'list_projects',
      'log_recall',
      'record_runbook_outcome',
      'save_conversation',
      'search_memories',
      'update_memory',
    ]);
    expect(byName.get('search_memories')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('delete_memory')!.annotations).toMatchObject({ destructiveHint: true });
    // The API's own request schema, listed short; only search_memories, whose hits are shaped for agents, lists its answer's.
    expect(byName.get('add_memory')!.inputSchema).toMatchObject({ required: ['content'], properties: { namespace: { type: 'string' } } });
    expect(tools.filter((t) => t.outputSchema).map((t) => t.name)).toEqual(['search_memories']);
    expect(byName.get('search_memories')!.outputSchema).toMatchObject({
      properties: { hits: { items: { required: ['id', 'content', 'relevance', 'namespace', 'occurred_at'] } } },
    });
    await client.close();
    // Still checked whole: a namespace over 200 characters is refused, by the route, with its code and message. As a
    // refused request over HTTP, it spends a write slot: another account's, as `a` writes in the tests below.
    const spare = await connect((await signUp(stack.api)).token);
    const long = await spare.callTool({ name: 'add_memory', arguments: { content: 'x', namespace: 'n'.repeat(201) } });
    expect(long.isError).toBe(true);
    expect(text(long)).toMatch(/^validation_failed: body\.namespace: /);
    await spare.close();
  });

  it('keeps tools/list under 10 KB and tells agents when to search and when to save', async () => {
    const post = async (body: object) =>
      (await fetch(new URL('/mcp', stack.baseUrl), {
        method: 'POST',
        headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(body),
      }).then((r) => r.json())) as { result: Record<string, unknown> };
    const listed = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(Buffer.byteLength(JSON.stringify(listed.result))).toBeLessThan(10_240);
    const client = await connect(a.token);
    expect(client.getInstructions()).toMatch(/Search \(search_memories\) before answering .* past decisions/);
    expect(client.getInstructions()).toMatch(/Save \(add_memory; save_conversation .*\) what will still be true/);
    await client.close();
  });

  it('answers 401 with a challenge naming its OAuth protected resource metadata, which it serves', async () => {
    const challenge = `Bearer resource_metadata="${stack.config.publicBaseUrl}/.well-known/oauth-protected-resource"`;
    for (const token of [undefined, 'svc_wrong']) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      };
      const mcp = await fetch(new URL('/mcp', stack.baseUrl), {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list' }),
      });
      expect(mcp.status).toBe(401);
      expect(mcp.headers.get('www-authenticate')).toBe(challenge);
      const api = await fetch(new URL('/api/projects', stack.baseUrl), { headers });
      expect(api.status).toBe(401);
      expect(api.headers.get('www-authenticate')).toBe(challenge);
    }
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const metadata = await fetch(new URL(path, stack.baseUrl));
      expect(metadata.status).toBe(200);
      expect(await metadata.json()).toEqual({
        resource: `${stack.config.publicBaseUrl}/mcp`,
        resource_name: 'memory-service',
        authorization_servers: [stack.config.publicBaseUrl],
        scopes_supported: ['memory'],
        bearer_methods_supported: ['header'],
      });
    }
  });

  it("saves a conversation's turns as a thread in one call, and finds them scoped to its user", async () => {
    const client = await connect(a.token);
    const saved = await client.callTool({
      name: 'save_conversation',
      arguments: {
        user_id: 'lee',
        messages: [
          { role: 'user', content: 'I keep my bike at the harbour garage' },
          { role: 'assistant', content: 'Got it: the bike is at the harbour garage' },
        ],
      },
    });
    expect(saved.isError).toBeFalsy();
    const captured = saved.structuredContent as { conversation_id: string; memories: { id: string; metadata: { chunk_index: number } }[] };
    expect(captured.memories.map((m) => m.metadata.chunk_index)).toEqual([0, 1]);
    const found = await client.callTool({ name: 'search_memories', arguments: { query: 'where is the bike', user_id: 'lee' } });
    expect((found.structuredContent as { hits: { id: string }[] }).hits.map((h) => h.id).sort()).toEqual(
      captured.memories.map((m) => m.id).sort(),
    );
    await client.close();
  });

  it('saves, finds, reads, updates and deletes a memory through tools, as the API does', async () => {
    const client = await connect(a.token);
    const added = await client.callTool({
      name: 'add_memory',
      arguments: { content: 'Deploys to production happen on Tuesdays', namespace: 'ops', tags: ['deploy'] },
    });
    expect(added.isError).toBeFalsy();
    const saved = added.structuredContent as { id: string; namespace: string; tags: string[]; occurred_at: number };
    expect(saved).toMatchObject({ namespace: 'ops', tags: ['deploy'] });
    // The same row the REST API shows.
    expect((await stack.api.get(`/api/memories/${saved.id}`, { token: a.token })).body).toMatchObject({
      id: saved.id,
      content: 'Deploys to production happen on Tuesdays',
    });

    // No mode named: hybrid, which this server (no embedding model) cannot serve, so the words answer.
    const found = await client.callTool({ name: 'search_memories', arguments: { query: 'deploys tuesdays', namespace: 'ops' } });
    const [hit, ...others] = (found.structuredContent as { hits: Record<string, unknown>[] }).hits;
    expect(others).toEqual([]);
    expect(hit).toMatchObject({
      id: saved.id,
      content: 'Deploys to production happen on Tuesdays',
      namespace: 'ops',
      occurred_at: new Date(saved.occurred_at).toISOString(),
    });
    // What an agent needs and no more: no nulls, no metadata, history, source or scores of the lists.
    expect(Object.keys(hit!).filter((key) => !['id', 'content', 'relevance', 'namespace', 'tags', 'occurred_at'].includes(key))).toEqual(
      [],
    );
    expect(hit!.relevance).toBeGreaterThan(0);
    expect(found._meta).toEqual({ mode: 'lexical' });
    // A mode the agent names is the route's, failure included.
    const meaning = await client.callTool({ name: 'search_memories', arguments: { query: 'deploys tuesdays', mode: 'semantic' } });
    expect(meaning.isError).toBe(true);
    expect(text(meaning)).toMatch(/^embeddings_unavailable: /);
    const read = await client.callTool({ name: 'get_memory', arguments: { id: saved.id } });
    expect((read.structuredContent as { content: string }).content).toBe('Deploys to production happen on Tuesdays');
    const updated = await client.callTool({ name: 'update_memory', arguments: { id: saved.id, tags: ['deploy', 'schedule'] } });
    expect((updated.structuredContent as { tags: string[] }).tags).toEqual(['deploy', 'schedule']);
    const listed = await client.callTool({ name: 'list_memories', arguments: { namespace: 'ops' } });
    expect((listed.structuredContent as { total: number }).total).toBe(1);
    const projects = await client.callTool({ name: 'list_projects', arguments: {} });
    expect((projects.structuredContent as { projects: { name: string }[] }).projects.map((p) => p.name)).toContain('ops');
    const recalled = await client.callTool({
      name: 'log_recall',
      arguments: { memory_ids: [saved.id], source: 'mcp-test', query: 'deploys tuesdays' },
    });
    expect(recalled.structuredContent).toEqual({ logged: 1, skipped: 0 });
    const deleted = await client.callTool({ name: 'delete_memory', arguments: { id: saved.id } });
    expect(deleted.structuredContent).toEqual({ deleted: true, id: saved.id });
    const gone = await client.callTool({ name: 'get_memory', arguments: { id: saved.id } });
    expect(gone.isError).toBe(true);
    expect(text(gone)).toMatch(/^not found/);
    await client.close();
  });

  it('finds runbooks by trigger phrase or words and records their outcomes', async () => {
    // Each test writes with an account of its own: the write limit here is 5 a minute per token.
    const r = await signUp(stack.api);
    const runbook = (
      await stack.api.post('/api/procedural', {
        token: r.token,
        body: {
          title: 'Roll back a deploy',
          summary: 'When a release breaks production',
          trigger_phrases: ['rollback'],
          steps: [{ description: 'Revert the release tag' }],
        },
      })
    ).body;
    const client = await connect(r.token);
    const byTrigger = await client.callTool({ name: 'find_runbooks', arguments: { trigger: 'rollback' } });
    expect((byTrigger.structuredContent as { procedurals: { id: string }[] }).procedurals.map((r) => r.id)).toEqual([runbook.id]);
    const byWords = await client.callTool({ name: 'find_runbooks', arguments: { q: 'release breaks' } });
    expect((byWords.structuredContent as { procedurals: { id: string }[] }).procedurals.map((r) => r.id)).toEqual([runbook.id]);
    const outcome = await client.callTool({ name: 'record_runbook_outcome', arguments: { id: runbook.id, outcome: 'success' } });
    expect(outcome.structuredContent).toMatchObject({ id: runbook.id, success_count: 1, failure_count: 0 });
    await client.close();
  });

  it("offers a project's recent memories and each runbook as resources", async () => {
    const r = await signUp(stack.api);
    const memory = (
      await stack.api.post('/api/memories', { token: r.token, body: { content: 'Resource-visible memory', namespace: 'team notes' } })
    ).body;
    const runbook = (
      await stack.api.post('/api/procedural', {
        token: r.token,
        body: { title: 'Rotate a key', steps: [{ description: 'Issue a new key' }] },
      })
    ).body;
    const client = await connect(r.token);
    const uris = (await client.listResources()).resources.map((x) => x.uri).sort();
    expect(uris).toEqual([`memory://projects/team%20notes/recent`, `memory://runbooks/${runbook.id}`].sort());
    const recent = await client.readResource({ uri: 'memory://projects/team%20notes/recent' });
    const listed = JSON.parse((recent.contents[0] as { text: string }).text) as { memories: { id: string }[] };
    expect(listed.memories.map((m) => m.id)).toEqual([memory.id]);
    const read = await client.readResource({ uri: `memory://runbooks/${runbook.id}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({
      title: 'Rotate a key',
      steps: [{ description: 'Issue a new key' }],
    });
    await expect(client.readResource({ uri: 'memory://runbooks/00000000-0000-4000-8000-000000000000' })).rejects.toThrow(/not found/);
    await client.close();
  });

  it("keeps tenants apart, needs a credential, and answers the API's errors as tool errors an agent can act on", async () => {
    const owner = await signUp(stack.api);
    const b = await signUp(stack.api);
    const mine = (await stack.api.post('/api/memories', { token: owner.token, body: { content: 'private to its org' } })).body.id as string;
    const other = await connect(b.token);
    const foreign = await other.callTool({ name: 'get_memory', arguments: { id: mine } });
    expect(foreign.isError).toBe(true);
    expect(text(foreign)).toBe(`not found: memory ${mine} not found`);

    const invalid = await other.callTool({ name: 'add_memory', arguments: { content: 'x', tags: ['t'.repeat(500)] } });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/^validation_failed: body\.tags\.0: /);

    // The write limit (5 a minute here) holds for tool calls too, with the seconds to wait.
    let limited: Awaited<ReturnType<Client['callTool']>> | undefined;
    for (let i = 0; i < 8 && !limited; i++) {
      const r = await other.callTool({ name: 'add_memory', arguments: { content: `note ${i}` } });
      if (r.isError) limited = r;
    }
    expect(text(limited!)).toMatch(/^rate-limited: .*retry after \d+ s/);
    expect(limited!._meta as object).toMatchObject({ status: 429, error: 'rate-limited', retry_after: expect.any(Number) });
    await other.close();

    // A free org past its quota: 402 as a tool error that says where to upgrade.
    const free = await signUp(stack.api);
    await bumpCounters(stack.orm.em.fork(), [{ orgId: free.org.id, scopeId: free.org.id, name: 'memories_created', delta: 500 }]);
    const quota = await connect(free.token);
    const refused = await quota.callTool({ name: 'add_memory', arguments: { content: 'one too many' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^memory_quota_exceeded: .*upgrade at http/);
    expect(refused._meta as object).toMatchObject({ status: 402, error: 'memory_quota_exceeded' });
    await quota.close();

    const anonymous = await fetch(new URL('/mcp', stack.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: string }).error).toBe('unauthorized');
  });

  it('keeps concurrent requests of different orgs apart (servers are reused between requests)', async () => {
    const orgs = await Promise.all([signUp(stack.api), signUp(stack.api), signUp(stack.api)]);
    const own = await Promise.all(
      orgs.map(
        async (org) =>
          (await stack.api.post('/api/memories', { token: org.token, body: { content: `only for ${org.org.id}` } })).body.id as string,
      ),
    );
    const clients = await Promise.all(orgs.map((org) => connect(org.token)));
    const rounds = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        clients[i % 3]!.callTool({ name: 'list_memories', arguments: {} }).then((r) => [i % 3, r] as const),
      ),
    );
    for (const [org, result] of rounds) {
      const ids = ((result.structuredContent as { memories: { id: string }[] }).memories ?? []).map((m) => m.id);
      expect(ids).toEqual([own[org]]);
    }
    await Promise.all(clients.map((c) => c.close()));
  });

  it('answers malformed, oversized and non-POST requests without a server error', async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(new URL('/mcp', stack.baseUrl), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${a.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body,
      });
    const malformed = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const oversized = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(3 * 1024 * 1024) } }),
    );
    expect(oversized.status).toBe(413);
    expect(((await oversized.json()) as { error: string }).error).toBe('payload_too_large');
    // Stateless: there is no session to stream notifications from, and no session to end.
    for (const method of ['GET', 'DELETE']) {
      const answer = await fetch(new URL('/mcp', stack.baseUrl), {
        method,
        headers: { authorization: `Bearer ${a.token}`, accept: 'text/event-stream' },
      });
      expect(answer.status, method).toBe(405);
      expect(answer.headers.get('allow')).toBe('POST');
    }
  });

  it('connects as the README shows it over HTTP (mcp-package.test.ts runs its stdio form)', async () => {
    const readme = await readFile('README.md', 'utf8');
    const http = [...readme.matchAll(/```json\n([\s\S]*?)\n```/g)]
      .map(
        (m) => (JSON.parse(m[1]!) as { mcpServers?: { memory?: { url?: string; headers?: Record<string, string> } } }).mcpServers?.memory,
      )
      .find((entry) => entry?.url)!;
    const r = await signUp(stack.api);
    // The README's address is the default local one; this stack listens elsewhere, at the same path.
    const overHttp = new Client({ name: 'readme', version: '1.0.0' });
    const headers = Object.fromEntries(Object.entries(http.headers ?? {}).map(([k, v]) => [k, v.replace('svc_...', r.token)]));
    await overHttp.connect(
      new StreamableHTTPClientTransport(new URL(new URL(http.url!).pathname, stack.baseUrl), { requestInit: { headers } }),
    );
    expect((await overHttp.listTools()).tools.length).toBe(12);
    await overHttp.close();
  });
});
