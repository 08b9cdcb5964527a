import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryTools, type MemoryToolHit } from '../../clients/typescript/src/ai-sdk.ts';
import { MemoryClient } from '../../clients/typescript/src/index.ts';
import { LlmServer, type LlmCall } from '../support/llm-server.ts';
import { signUp, startStack, type Stack } from '../support/stack.ts';

// The client's Vercel AI SDK tools in an agent of the real SDK and its Anthropic provider, against the real
// stack; LlmServer plays the model (scripted tool calls) and the embedding provider that hybrid search needs.
const llm = new LlmServer();
let stack: Stack;
let client: MemoryClient;
beforeAll(async () => {
  await llm.start();
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...llm.embeddingEnv() } });
  client = new MemoryClient({ baseUrl: stack.baseUrl, token: (await signUp(stack.api)).token });
});
afterAll(async () => {
  await stack?.close();
  await llm.close();
});

describe('memoryTools for the Vercel AI SDK', () => {
  it("lets an agent save a memory, then search for it, within its user's scope only", async () => {
    // Another user of the same org, with a memory that matches the agent's search word for word.
    const other = await client.addMemory({ content: 'Sam is vegetarian and allergic to peanuts', user_id: 'sam' });
    const chats: LlmCall[] = [];
    llm.respond((call) => {
      chats.push(call);
      const results = call.messages.filter((m) => m.role === 'tool');
      if (results.length === 0)
        return LlmServer.toolCalls([{ name: 'saveMemory', input: { content: 'Alex is vegetarian and allergic to peanuts' } }]);
      // The model tries to leave its scope: the input schema has no user_id, so it is dropped.
      if (results.length === 1)
        return LlmServer.toolCalls([{ name: 'searchMemories', input: { query: 'vegetarian allergic peanuts', user_id: 'sam' } }]);
      return `Found: ${results[1]!.content}`;
    });

    const anthropic = createAnthropic({ apiKey: 'sk-ant-test', baseURL: `${llm.url}/v1` });
    const result = await generateText({
      model: anthropic('claude-haiku-4-5'),
      tools: memoryTools(client, { userId: 'alex' }),
      stopWhen: stepCountIs(5),
      prompt: 'I am vegetarian and allergic to peanuts. What do you know about my diet?',
    });

    expect(result.steps.map((step) => step.toolCalls.map((c) => c.toolName))).toEqual([['saveMemory'], ['searchMemories'], []]);
    expect(chats[0]!.tools.map((t) => t.name).sort()).toEqual(['saveMemory', 'searchMemories']);
    const saved = result.steps[0]!.toolResults[0]!.output as { id: string; content: string };
    expect(saved.content).toBe('Alex is vegetarian and allergic to peanuts');
    expect(await client.getMemory(saved.id)).toMatchObject({ content: saved.content, user_id: 'alex' });

    // What the search tool answered is what the model read next: alex's memory, not sam's.
    const searchResult = JSON.parse(chats[2]!.messages.filter((m) => m.role === 'tool')[1]!.content) as MemoryToolHit[];
    expect(searchResult).toEqual([{ id: saved.id, content: saved.content, relevance: expect.any(Number) }]);
    expect(result.text).toBe(`Found: ${chats[2]!.messages.at(-1)!.content}`);
    // The same search without the scope finds sam's memory as well.
    const unscoped = await client.searchMemories({ query: 'vegetarian allergic peanuts', mode: 'hybrid', min_relevance: 0.15 });
    expect(unscoped.map((hit) => hit.id).sort()).toEqual([saved.id, other.id].sort());
  });
});
