import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { llmEnv } from '../support/llm-env.ts';
import { LlmServer } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// mem0's own official clients, unchanged and installed from their registries by the test command
// (scripts/lib.sh, ensure_mem0_clients), pointed at /compat/mem0 with one of our tokens. Their usage telemetry is
// off (MEM0_TELEMETRY=false), and their home folder is a temporary one: nothing leaves this machine.
const llm = new LlmServer();
let stack: Stack;
let paid: SignedUp;
const home = mkdtempSync(join(tmpdir(), 'mem0-home-'));
beforeAll(async () => {
  await llm.start();
  llm.respond((call) => (call.tool?.name === 'extract_conversation_facts' ? { facts: ['Alex lives in Berlin'] } : { entities: [] }));
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...llmEnv(llm) } });
  paid = await signUp(stack.api);
  await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${paid.org.id}`);
});
afterAll(async () => {
  await stack?.close();
  await llm.close();
});

const clientEnv = () => ({
  ...process.env,
  HOME: home,
  MEM0_DIR: join(home, '.mem0'),
  MEM0_TELEMETRY: 'false',
  MEM0_API_KEY: paid.token,
  MEM0_HOST: `${stack.baseUrl}/compat/mem0`,
});
// The npm client's methods this test calls, as it declares them (loosely: its own types are not installed here).
interface Mem0Client {
  add(messages: { role: string; content: string }[], options: unknown): Promise<unknown>;
  getAll(options: unknown): Promise<unknown>;
  search(query: string, options: unknown): Promise<unknown>;
  get(id: string): Promise<unknown>;
  update(id: string, data: { text: string }): Promise<unknown>;
  history(id: string): Promise<unknown>;
  delete(id: string): Promise<unknown>;
}
type Step = { ok?: Record<string, unknown> & { results?: Record<string, unknown>[] }; error?: string; message?: string };

describe("mem0's own clients against /compat/mem0", () => {
  it('the Python client (PyPI mem0ai): add with and without inference, get_all and search with its filters, get, update, history, batches, delete, delete_all, errors', async () => {
    const python = join(process.env.MEM0_PYTHON_VENV!, 'bin', 'python');
    const script = new URL('../compat/mem0_python_scenario.py', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(python, [script], { env: clientEnv(), timeout: 120_000 });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, Step> & {
      org_id: string;
      async: { added: Step['ok']; found: Step['ok'] };
    };
    expect(out.org_id).toBe(paid.org.id);

    const added = out.add!.ok!;
    expect(added.status).toBe('SUCCEEDED');
    expect(added.results!.map((r) => [r.memory, r.user_id, r.agent_id, r.run_id, r.event])).toEqual([
      ["I'm Alex. I am vegetarian and allergic to peanuts.", 'alex', 'chef', 'dinner-1', 'ADD'],
      ['Noted: vegetarian, and no peanuts.', 'alex', 'chef', 'dinner-1', 'ADD'],
    ]);
    // Saved as a thread of the run, with their roles.
    expect(added.results!.map((r) => r.metadata)).toEqual([
      { source_app: 'kitchen', role: 'user', parent_ref: 'dinner-1', chunk_index: 0 },
      { source_app: 'kitchen', role: 'assistant', parent_ref: 'dinner-1', chunk_index: 1 },
    ]);
    const text = await stack.api.get(`/api/memories/${out.add_text!.ok!.results![0]!.id}`, { token: paid.token });
    expect(text.body).toMatchObject({ content: 'I prefer Italian food', occurred_at: 1767225600_000 });

    // infer (mem0's default): queued, then the curator extracts the fact.
    const inferred = out.add_inferred!.ok!;
    expect(inferred.status).toBe('PENDING');
    await eventually(
      async () =>
        (await stack.api.get(`/api/conversations/extractions/${inferred.event_id}`, { token: paid.token })).body.status === 'processed',
      60_000,
    );
    const facts = await stack.api.post('/api/memories/list', {
      token: paid.token,
      body: { user_id: 'bea', filters: { source: 'extraction' } },
    });
    expect(facts.body.memories.map((m: { content: string }) => m.content)).toEqual(['Alex lives in Berlin']);

    expect(out.get_all!.ok!.count).toBe(2);
    expect(out.get_all!.ok!.results!.map((r) => r.memory).sort()).toEqual(added.results!.map((r) => r.memory).sort());
    expect(out.get_all_or!.ok!.count).toBe(2);
    const hits = out.search!.ok!.results!;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(2);
    expect(hits[0]!.memory).toMatch(/peanuts/);
    expect(typeof hits[0]!.score).toBe('number');
    const kitchen = out.search_meta!.ok!.results!;
    expect(kitchen.length).toBeGreaterThan(0);
    expect(kitchen.every((r) => (r.metadata as { source_app?: string }).source_app === 'kitchen')).toBe(true);

    expect(out.get!.ok!).toMatchObject({ id: added.results![0]!.id, memory: added.results![0]!.memory, categories: [] });
    expect(out.update!.ok!).toMatchObject({
      memory: "I'm Alex. I am vegan and allergic to peanuts.",
      metadata: { checked: true, source_app: 'kitchen' },
    });
    expect((out.history!.ok! as unknown as { event: string }[]).map((h) => h.event)).toEqual(['ADD', 'UPDATE']);
    expect(out.get_after_batch!.ok!.memory).toBe('Noted: vegan, and no peanuts.');
    expect(out.batch_delete!.ok!).toMatchObject({
      message: expect.stringMatching(/deleted 1/),
      failed: [{ memory_id: '00000000-0000-1000-8000-000000000000', error: 'not found' }],
    });
    expect(out.delete!.ok!.message).toMatch(/deleted/);
    expect(out.get_deleted!.error).toBe('MemoryNotFoundError');
    expect(out.graph!).toMatchObject({ error: 'ValidationError', message: expect.stringMatching(/graph memory/) });
    expect(out.bad_filter!).toMatchObject({
      error: 'ValidationError',
      message: expect.stringMatching(/unknown filter field \\?"colour\\?"/),
    });
    // What was left of alex's: the text saved alone.
    expect(out.delete_all!.ok!.message).toMatch(/Deleting the 1 memories/);
    await eventually(
      async () => (await stack.api.post('/api/memories/list', { token: paid.token, body: { user_id: 'alex' } })).body.total === 0,
      60_000,
    );

    expect(out.async.added!.results![0]!.memory).toBe('Sam keeps a sourdough starter called Bubbles');
    expect(out.async.found!.results!.map((r) => r.memory)).toEqual(['Sam keeps a sourdough starter called Bubbles']);
  });

  it('the TypeScript client (npm mem0ai): add, getAll, search, get, update, history, delete', async () => {
    process.env.MEM0_TELEMETRY = 'false';
    const { MemoryClient } = createRequire(join(process.env.MEM0_NODE_DIR!, 'package.json'))('mem0ai') as {
      MemoryClient: new (options: { apiKey: string; host: string }) => Mem0Client;
    };
    const client = new MemoryClient({ apiKey: paid.token, host: `${stack.baseUrl}/compat/mem0` });
    const added = (await client.add([{ role: 'user', content: 'Robin plays the oboe in a quartet' }], {
      user_id: 'robin',
      infer: false,
    })) as { results: { id: string; memory: string }[] };
    expect(added.results.map((r) => r.memory)).toEqual(['Robin plays the oboe in a quartet']);
    const id = added.results[0]!.id;
    const all = (await client.getAll({ filters: { user_id: 'robin' } })) as { count: number; results: { id: string }[] };
    expect(all).toMatchObject({ count: 1, results: [{ id }] });
    const found = (await client.search('oboe', { filters: { user_id: 'robin' } })) as { results: { id: string }[] };
    expect(found.results.map((r) => r.id)).toEqual([id]);
    // The npm client hands answers over in camelCase.
    expect(await client.get(id)).toMatchObject({ id, memory: 'Robin plays the oboe in a quartet', userId: 'robin' });
    expect(await client.update(id, { text: 'Robin plays the oboe and the cor anglais' })).toMatchObject({
      memory: 'Robin plays the oboe and the cor anglais',
    });
    expect(((await client.history(id)) as { event: string }[]).map((h) => h.event)).toEqual(['ADD', 'UPDATE']);
    expect(await client.delete(id)).toMatchObject({ message: expect.stringMatching(/deleted/) });
    await expect(client.get(id)).rejects.toThrow();
  });
});
