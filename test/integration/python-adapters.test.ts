import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmServer } from '../support/llm-server.ts';
import { buildPythonClient, pythonClientVenv, runPythonScenario } from '../support/python-client.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// The Python client's adapters (clients/python/src/memory_service/{langgraph,openai_agents,anthropic_memory}.py)
// used by the frameworks themselves, from the wheel installed with its extras in a fresh venv:
// test/support/python_adapters_scenario.py against the real stack with the bundled embedding model. The OpenAI
// Agents SDK's model is this test's LLM server, speaking OpenAI's protocol.
const llm = new LlmServer();
let stack: Stack;
let a: SignedUp;
let work: string;
let python: string;
beforeAll(async () => {
  await llm.start();
  llm.respond((call) => {
    // The OpenAI Agents SDK's model: says how many user messages it was sent, so the test sees the history replayed.
    if (call.protocol === 'openai') {
      return `I heard ${call.messages.filter((m) => m.role === 'user').length} user messages; the last: ${call.messages.at(-1)?.content}`;
    }
    // A Claude using the memory tool: writes a file, lists the directory, then answers with what the listing said.
    const results = call.messages.filter((m) => m.role === 'tool');
    if (results.length === 0) {
      return LlmServer.toolCalls([
        { name: 'memory', input: { command: 'create', path: '/memories/travel.md', file_text: 'Prefers window seats.\n' } },
      ]);
    }
    if (results.length === 1) return LlmServer.toolCalls([{ name: 'memory', input: { command: 'view', path: '/memories' } }]);
    return `Saved. The listing: ${results[1]!.content}`;
  });
  stack = await startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  work = await mkdtemp(join(tmpdir(), 'python-adapters-'));
  python = await pythonClientVenv(work, await buildPythonClient(work), ['langgraph', 'openai-agents', 'anthropic']);
}, 240_000);
afterAll(async () => {
  await stack?.close();
  await llm.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the Python client's adapters", () => {
  let out: Record<string, Record<string, unknown>>;
  beforeAll(async () => {
    const env = {
      MEMORY_SERVICE_URL: stack.baseUrl,
      MEMORY_SERVICE_TOKEN: a.token,
      LLM_BASE_URL: `${llm.url}/v1`,
      ANTHROPIC_BASE_URL: llm.url,
      OPENAI_AGENTS_DISABLE_TRACING: '1',
    };
    out = (await runPythonScenario(python, 'python_adapters_scenario.py', env)) as typeof out;
  }, 240_000);

  it("LangGraph's store: put, get, replace, search by meaning in a namespace prefix, filters, namespaces, async", () => {
    const lg = out.langgraph!;
    // Inside a compiled graph (the store injected into the node): the diet fact first for a question in other words.
    expect(lg.recalled).toEqual([
      ['diet', 'Alex is vegetarian and allergic to peanuts', true],
      ['pet', 'Alex has a cat named Miso', true],
    ]);
    expect(lg.get).toEqual({
      value: { text: 'Alex is vegetarian and allergic to peanuts', stars: 4 },
      namespace: ['users', 'alex', 'facts'],
      key: 'diet',
      dated: true,
    });
    // A put of an existing key replaces its value in the same memory.
    expect(lg.replaced).toEqual({ text: 'Alex is vegan now', stars: 5 });
    expect(lg.memories_after_replace).toBe(2);
    expect(lg.missing).toBe(true);
    expect(lg.by_filter).toEqual(['users/alex/facts', 'users/bob/facts']);
    expect(lg.by_equality).toEqual(['pet']);
    expect(lg.namespaces).toEqual([
      ['users', 'alex', 'facts'],
      ['users', 'bob', 'facts'],
    ]);
    expect(lg.depth_one).toEqual([['users']]);
    expect(lg.by_suffix).toEqual([['users', 'bob', 'facts']]);
    expect(lg.async).toEqual({ found: 'city', deleted: true });
  });

  it("the OpenAI Agents SDK's Session: the Runner keeps its history in a thread", () => {
    const agents = out.agents!;
    // The second run's model call carried the first exchange: the history came back from the service.
    expect(agents.answers).toEqual([
      'I heard 1 user messages; the last: My name is Alex and I like green tea.',
      'I heard 2 user messages; the last: What do I like to drink?',
    ]);
    expect(agents.roles).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(agents.first_item).toEqual({ role: 'user', content: 'My name is Alex and I like green tea.' });
    expect(agents.last_two).toEqual(['user', 'assistant']);
    expect(agents.thread_users).toEqual(['assistant', 'user']);
    expect(agents.searchable).toContain('My name is Alex and I like green tea.');
    expect(agents.popped_role).toBe('assistant');
    expect(agents.after_pop).toBe(3);
    expect(agents.after_clear).toBe(0);
  });

  it("Anthropic's memory tool: files as memories, driven by the SDK's own tool runner", () => {
    const tool = out.anthropic!;
    expect(tool.definition).toEqual({ type: 'memory_20250818', name: 'memory' });
    expect(tool.empty_root).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n0B\t/memories",
    );
    expect(tool.create).toBe('File created successfully at: /memories/notes/diet.md');
    expect(tool.again).toBe('ToolError: File /memories/notes/diet.md already exists');
    expect(tool.replace).toContain('     1\tAlex is vegan.');
    expect(tool.insert).toBe('The file /memories/notes/diet.md has been edited.');
    const file = '     1\t# Diet\n     2\tAlex is vegan.\n     3\tNo peanuts.\n     4\t';
    expect(tool.view_file).toBe(`Here's the content of /memories/notes/diet.md with line numbers:\n${file}`);
    expect(tool.view_range).toBe("Here's the content of /memories/notes/diet.md with line numbers:\n     2\tAlex is vegan.");
    expect(tool.rename).toBe('Successfully renamed /memories/notes to /memories/people');
    expect(tool.view_root).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n" +
        '34B\t/memories\n34B\t/memories/people/\n34B\t/memories/people/diet.md',
    );
    expect(tool.escape).toBe('ToolError: Path /memories/../etc/passwd would escape /memories directory');
    expect(tool.missing).toBe('ToolError: The path /memories/nothing.md does not exist. Please provide a valid path.');
    // The files are memories: searchable like any other.
    expect(tool.searchable).toEqual(['/memories/people/diet.md']);
    expect(tool.async_view).toBe(`Here's the content of /memories/people/diet.md with line numbers:\n${file}`);
    // Scoped by user: bob's /memories is empty.
    expect(tool.other_user).toBe(tool.empty_root);
    expect(tool.runner).toMatch(/^Saved\. The listing: .*\t\/memories\/travel\.md/s);
    expect(tool.delete).toBe('Successfully deleted /memories/people');
    expect(tool.after_delete).toBe('ToolError: The path /memories/people/diet.md does not exist. Please provide a valid path.');
  });
});
