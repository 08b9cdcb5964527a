import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LlmServer, type LlmCall } from '../support/llm-server.ts';

const server = new LlmServer();
const MODEL_A = 'claude-haiku-4-5';
const MODEL_O = 'gpt-5-mini';
const entitySchema = {
  type: 'object',
  properties: { entities: { type: 'array', items: { type: 'object' } } },
  required: ['entities'],
  additionalProperties: false,
};

beforeAll(() => server.start());
afterAll(() => server.close());
beforeEach(() => server.reset());

function anthropic(apiKey = 'sk-ant-test', maxRetries = 0): Anthropic {
  return new Anthropic({ apiKey, baseURL: server.url, maxRetries });
}

function openai(apiKey = 'sk-test', maxRetries = 0): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${server.url}/v1`, maxRetries });
}

function anthropicTool(client: Anthropic, name: string, text: string, schema: Record<string, unknown> = { type: 'object' }) {
  return client.messages.create({
    model: MODEL_A,
    max_tokens: 1024,
    system: 'You extract things.',
    messages: [{ role: 'user', content: text }],
    tools: [{ name, description: `The ${name} tool.`, input_schema: { type: 'object', ...schema } }],
    tool_choice: { type: 'tool', name },
  });
}

async function anthropicToolInput(name: string, text: string): Promise<unknown> {
  const message = await anthropicTool(anthropic(), name, text);
  const block = message.content[0];
  if (block?.type !== 'tool_use') throw new Error(`expected tool_use, got ${block?.type}`);
  return block.input;
}

function openaiStructured(client: OpenAI, name: string, text: string, schema: Record<string, unknown> = { type: 'object' }) {
  return client.chat.completions.create({
    model: MODEL_O,
    messages: [
      { role: 'system', content: 'You extract things.' },
      { role: 'user', content: text },
    ],
    response_format: { type: 'json_schema', json_schema: { name, schema, strict: true } },
  });
}

async function openaiStructuredValue(name: string, text: string): Promise<unknown> {
  const completion = await openaiStructured(openai(), name, text);
  return JSON.parse(completion.choices[0]?.message.content ?? 'null');
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('Anthropic Messages API', () => {
  it('answers a forced tool call with a tool_use block and records the call', async () => {
    const message = await anthropicTool(
      anthropic(),
      'extract_entities',
      'Alice moved to Paris to work for Acme Corp on Kafka.',
      entitySchema,
    );

    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.model).toBe(MODEL_A);
    expect(message.id).toMatch(/^msg_/);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const block = message.content[0];
    expect(block?.type).toBe('tool_use');
    if (block?.type !== 'tool_use') return;
    expect(block.name).toBe('extract_entities');
    expect(block.id).toMatch(/^toolu_/);
    expect(block.input).toEqual({
      entities: [
        { name: 'Alice', type: 'person', aliases: [] },
        { name: 'Paris', type: 'location', aliases: [] },
        { name: 'Acme Corp', type: 'organization', aliases: [] },
        { name: 'Kafka', type: 'technology', aliases: [] },
      ],
    });

    expect(server.calls).toHaveLength(1);
    const call = server.calls[0]!;
    expect(call).toMatchObject({
      protocol: 'anthropic',
      apiKey: 'sk-ant-test',
      model: MODEL_A,
      system: 'You extract things.',
      messages: [{ role: 'user', content: 'Alice moved to Paris to work for Acme Corp on Kafka.' }],
      tool: { name: 'extract_entities', schema: entitySchema },
      status: 200,
    });
    expect(call.body).toMatchObject({ max_tokens: 1024 });
  });

  it('answers text-only requests with a text block, reading a system prompt given as blocks', async () => {
    const message = await anthropic().messages.create({
      model: MODEL_A,
      max_tokens: 256,
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Be kind.' },
      ],
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'Hello there' }] },
      ],
    });

    expect(message.stop_reason).toBe('end_turn');
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: Hello there', citations: null }]);
    expect(server.calls[0]).toMatchObject({
      system: 'Be brief.\nBe kind.',
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'Hello there' },
      ],
      status: 200,
    });
    expect(server.calls[0]!.tool).toBeUndefined();
  });

  it('answers with the handler set by respond(), and raw() text in place of a tool call', async () => {
    const seen: LlmCall[] = [];
    server.respond(async (call) => {
      seen.push(call);
      return call.tool ? { answer: 42 } : 'plain';
    });
    expect(await anthropicToolInput('anything', 'q')).toEqual({ answer: 42 });
    expect(seen[0]?.tool?.name).toBe('anything');

    server.respond(() => LlmServer.raw('{"answer": oops'));
    const message = await anthropicTool(anthropic(), 'anything', 'q');
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content).toEqual([{ type: 'text', text: '{"answer": oops', citations: null }]);
  });

  it('answers 401 authentication_error for a key not in validKeys', async () => {
    server.validKeys.add('sk-ant-good');
    const err = await rejection(anthropicTool(anthropic('sk-ant-bad'), 'extract_entities', 'x'));
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.AuthenticationError>).status).toBe(401);
    expect((err as InstanceType<typeof Anthropic.AuthenticationError>).type).toBe('authentication_error');
    expect(server.calls[0]).toMatchObject({ apiKey: 'sk-ant-bad', status: 401 });

    await expect(anthropicTool(anthropic('sk-ant-good'), 'extract_entities', 'x')).resolves.toMatchObject({ stop_reason: 'tool_use' });
  });

  it('takes the key from x-api-key when a client sends it there', async () => {
    server.validKeys.add('sk-ant-header');
    const client = new Anthropic({ apiKey: null, baseURL: server.url, maxRetries: 0, defaultHeaders: { 'x-api-key': 'sk-ant-header' } });
    await client.messages.create({ model: MODEL_A, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    expect(server.calls[0]).toMatchObject({ apiKey: 'sk-ant-header', status: 200 });
  });

  it('plays scripted faults in order with protocol error types', async () => {
    server.failNext('anthropic', 1, 500);
    server.failNext('anthropic', 1, 529);
    server.failNext('anthropic', 1, 429);
    const client = anthropic();

    const internal = await rejection(anthropicTool(client, 'summarize', 'x'));
    expect(internal).toBeInstanceOf(Anthropic.InternalServerError);
    expect((internal as InstanceType<typeof Anthropic.APIError>).type).toBe('api_error');

    const overloaded = await rejection(anthropicTool(client, 'summarize', 'x'));
    expect(overloaded).toBeInstanceOf(Anthropic.InternalServerError);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).type).toBe('overloaded_error');

    const limited = await rejection(anthropicTool(client, 'summarize', 'x'));
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.APIError>).type).toBe('rate_limit_error');
    expect((limited as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after')).toBe('0');

    await expect(anthropicTool(client, 'summarize', 'x')).resolves.toMatchObject({ stop_reason: 'tool_use' });
    expect(server.calls.map((c) => c.status)).toEqual([500, 529, 429, 200]);
  });

  it('lets the client retry through faults', async () => {
    server.failNext('anthropic', 2, 500);
    await expect(anthropicTool(anthropic('sk-ant-test', 2), 'summarize', 'Done. Really.')).resolves.toMatchObject({
      content: [{ type: 'tool_use', input: { synopsis: 'Done.' } }],
    });
    expect(server.calls.map((c) => c.status)).toEqual([500, 500, 200]);
  });

  it('answers 503 while down', async () => {
    server.down('anthropic', true);
    const err = await rejection(anthropicTool(anthropic(), 'summarize', 'x'));
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
    // Only the protocol that is down fails.
    await expect(openaiStructured(openai(), 'summarize', 'x')).resolves.toBeDefined();

    server.down('anthropic', false);
    await expect(anthropicTool(anthropic(), 'summarize', 'x')).resolves.toBeDefined();
  });

  it('answers 400 invalid_request_error for a tool_choice naming no tool, and 404 for other routes', async () => {
    const bad = await rejection(
      anthropic().messages.create({
        model: MODEL_A,
        max_tokens: 16,
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ name: 'a', input_schema: { type: 'object' } }],
        tool_choice: { type: 'tool', name: 'b' },
      }),
    );
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.APIError>).type).toBe('invalid_request_error');

    const missing = await rejection(anthropic().models.retrieve('claude-x'));
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect((missing as InstanceType<typeof Anthropic.APIError>).type).toBe('not_found_error');
  });

  it('answers 500 without retry when the handler breaks', async () => {
    server.respond(() => ({ not: 'a string' }));
    const err = await rejection(
      anthropic('sk-ant-test', 2).messages.create({ model: MODEL_A, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect(String((err as Error).message)).toContain('return a string');
    expect(server.calls).toHaveLength(1);
  });
});

describe('OpenAI Chat Completions API', () => {
  it('answers json_schema structured output with JSON content and records the call', async () => {
    const completion = await openaiStructured(openai(), 'extract_entities', 'We met Bob from Google in New York.', entitySchema);

    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.model).toBe(MODEL_O);
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('stop');
    expect(JSON.parse(choice?.message.content ?? '')).toEqual({
      entities: [
        { name: 'Bob', type: 'person', aliases: [] },
        { name: 'Google', type: 'organization', aliases: [] },
        { name: 'New York', type: 'location', aliases: [] },
      ],
    });

    expect(server.calls).toEqual([
      {
        protocol: 'openai',
        apiKey: 'sk-test',
        model: MODEL_O,
        system: 'You extract things.',
        messages: [{ role: 'user', content: 'We met Bob from Google in New York.' }],
        tools: [],
        tool: { name: 'extract_entities', schema: entitySchema },
        status: 200,
        body: expect.objectContaining({ model: MODEL_O }),
      },
    ]);
  });

  it('answers text-only requests with content, reading a developer message as the system prompt', async () => {
    const completion = await openai().chat.completions.create({
      model: MODEL_O,
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hello there' }] },
      ],
    });
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Echo: Hello there' });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(server.calls[0]).toMatchObject({ system: 'Be brief.', messages: [{ role: 'user', content: 'Hello there' }] });
    expect(server.calls[0]!.tool).toBeUndefined();
  });

  it('answers with the handler set by respond(), and raw() text that is not JSON', async () => {
    server.respond((call) => (call.tool ? { answer: call.model } : 'plain'));
    expect(await openaiStructuredValue('anything', 'q')).toEqual({ answer: MODEL_O });

    server.respond(() => LlmServer.raw('Sure! Here is the JSON: {'));
    const completion = await openaiStructured(openai(), 'anything', 'q');
    expect(completion.choices[0]?.message.content).toBe('Sure! Here is the JSON: {');
  });

  it('answers 401 invalid_api_key for a key not in validKeys', async () => {
    server.validKeys.add('sk-good');
    const err = await rejection(openaiStructured(openai('sk-bad'), 'summarize', 'x'));
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('invalid_api_key');
    expect((err as InstanceType<typeof OpenAI.APIError>).type).toBe('invalid_request_error');
    expect(server.calls[0]).toMatchObject({ apiKey: 'sk-bad', status: 401 });

    await expect(openaiStructured(openai('sk-good'), 'summarize', 'x')).resolves.toBeDefined();
  });

  it('plays scripted faults with protocol error bodies', async () => {
    server.failNext('openai', 1, 500);
    server.failNext('openai', 1, 429);
    const client = openai();

    const internal = await rejection(openaiStructured(client, 'summarize', 'x'));
    expect(internal).toBeInstanceOf(OpenAI.InternalServerError);
    expect((internal as InstanceType<typeof OpenAI.APIError>).type).toBe('server_error');

    const limited = await rejection(openaiStructured(client, 'summarize', 'x'));
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.APIError>).code).toBe('rate_limit_exceeded');
    expect((limited as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('0');

    expect(server.calls.map((c) => c.status)).toEqual([500, 429]);
  });

  it('lets the client retry through faults', async () => {
    server.failNext('openai', 2, 500);
    const completion = await openaiStructured(openai('sk-test', 2), 'summarize', 'Done. Really.');
    expect(JSON.parse(completion.choices[0]?.message.content ?? '')).toEqual({ synopsis: 'Done.' });
    expect(server.calls.map((c) => c.status)).toEqual([500, 500, 200]);
  });

  it('answers 503 while down and 404 for other routes', async () => {
    server.down('openai', true);
    const err = await rejection(openaiStructured(openai(), 'summarize', 'x'));
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    server.down('openai', false);

    const missing = await rejection(openai().models.retrieve('gpt-x'));
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.APIError>).type).toBe('invalid_request_error');
  });
});

describe("a model's own tool calls", () => {
  const memoryCall = { name: 'memory', input: { command: 'view', path: '/memories' } };
  // Calls the memory tool until a result comes back, then answers with what the tool said.
  const agent = (call: LlmCall) => {
    const result = call.messages.findLast((m) => m.role === 'tool');
    return result ? `The memory tool said: ${result.content}` : LlmServer.toolCalls([memoryCall]);
  };

  it('Anthropic: offers a built-in tool under a beta header, answers tool_use, and shows the tool result', async () => {
    server.respond(agent);
    const client = anthropic();
    const tools: Anthropic.Beta.BetaToolUnion[] = [
      { type: 'memory_20250818', name: 'memory' },
      { name: 'lookup', description: 'Looks things up.', input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
    ];
    const request = { model: MODEL_A, max_tokens: 256, tools, betas: ['context-management-2025-06-27'] };
    const first = await client.beta.messages.create({ ...request, messages: [{ role: 'user', content: 'What do you remember?' }] });

    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'memory', input: memoryCall.input, caller: { type: 'direct' } },
    ]);
    expect(server.calls[0]!.tools).toEqual([
      { name: 'memory', schema: undefined, type: 'memory_20250818' },
      { name: 'lookup', schema: { type: 'object', properties: { q: { type: 'string' } } } },
    ]);

    const toolUse = first.content[0] as Anthropic.Beta.BetaToolUseBlock;
    const second = await client.beta.messages.create({
      ...request,
      messages: [
        { role: 'user', content: 'What do you remember?' },
        { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, toolUse] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: toolUse.id, content: [{ type: 'text', text: 'Directory: /memories\n- notes.md' }] },
            { type: 'text', text: 'Be brief.' },
          ],
        },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content).toEqual([{ type: 'text', text: 'The memory tool said: Directory: /memories\n- notes.md', citations: null }]);
    expect(server.calls[1]!.messages).toEqual([
      { role: 'user', content: 'What do you remember?' },
      { role: 'assistant', content: 'Let me look.\nmemory({"command":"view","path":"/memories"})' },
      { role: 'tool', content: 'Directory: /memories\n- notes.md' },
      { role: 'user', content: 'Be brief.' },
    ]);
  });

  it('OpenAI: offers functions, answers tool_calls, and shows the tool messages', async () => {
    server.respond(agent);
    const client = openai();
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'memory', parameters: { type: 'object' } } }];
    const first = await client.chat.completions.create({
      model: MODEL_O,
      tools,
      messages: [{ role: 'user', content: 'What do you remember?' }],
    });

    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'memory', arguments: JSON.stringify(memoryCall.input) } },
    ]);
    expect(server.calls[0]!.tools).toEqual([{ name: 'memory', schema: { type: 'object' } }]);

    const second = await client.chat.completions.create({
      model: MODEL_O,
      tools,
      messages: [
        { role: 'user', content: 'What do you remember?' },
        { role: 'assistant', content: null, tool_calls: choice.message.tool_calls },
        { role: 'tool', tool_call_id: choice.message.tool_calls![0]!.id, content: 'Directory: /memories' },
      ],
    });
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'The memory tool said: Directory: /memories' } });
    expect(server.calls[1]!.messages).toEqual([
      { role: 'user', content: 'What do you remember?' },
      { role: 'assistant', content: 'memory({"command":"view","path":"/memories"})' },
      { role: 'tool', content: 'Directory: /memories' },
    ]);
  });

  it('answers 500 without retry when the handler calls a tool the request did not offer', async () => {
    server.respond(() => LlmServer.toolCalls([memoryCall]));
    const err = await rejection(
      openai('sk-test', 2).chat.completions.create({ model: MODEL_O, messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as Error).message).toContain('handler called tool memory, which the request did not offer');
    expect(server.calls).toHaveLength(1);
  });
});

describe('the default handler', () => {
  it('summarizes to the first sentence, at most 200 characters', async () => {
    expect(await openaiStructuredValue('summarize', 'The deploy failed.  We rolled back! Then it worked.')).toEqual({
      synopsis: 'The deploy failed.',
    });
    const long = 'x'.repeat(300);
    expect(await anthropicToolInput('summarize', long)).toEqual({ synopsis: 'x'.repeat(200) });
  });

  it('extracts each sentence as a fact, at most 10', async () => {
    expect(await anthropicToolInput('extract_facts', 'One. Two? Three!')).toEqual({ facts: ['One.', 'Two?', 'Three!'] });
    const many = Array.from({ length: 12 }, (_, i) => `Fact ${i}.`).join(' ');
    expect(((await openaiStructuredValue('extract_facts', many)) as { facts: string[] }).facts).toHaveLength(10);
  });

  it('finds a contradiction when exactly one text is negated', async () => {
    expect(await anthropicToolInput('check_contradiction', 'Alice uses Postgres.\n---\nAlice no longer uses Postgres.')).toMatchObject({
      contradicts: true,
    });
    expect(await openaiStructuredValue('check_contradiction', 'Bob is not on call.\n---\nBob is not on call today.')).toMatchObject({
      contradicts: false,
    });
    expect(await openaiStructuredValue('check_contradiction', 'The sky is blue.\n---\nThe sky is blue at noon.')).toMatchObject({
      contradicts: false,
      explanation: expect.any(String),
    });
  });

  it('merges two memories and flags a conflict by the same rule', async () => {
    expect(await anthropicToolInput('merge_memories', 'Deploys run on Fridays.\n---\nDeploys do not run on Fridays.')).toEqual({
      merged: 'Deploys run on Fridays. Deploys do not run on Fridays.',
      had_conflict: true,
    });
    expect(await openaiStructuredValue('merge_memories', 'A.\n---\nB.')).toEqual({ merged: 'A. B.', had_conflict: false });
  });

  it('echoes a chat reply, and extracts entities deterministically', async () => {
    expect(await openaiStructuredValue('chat_reply', 'How do I deploy?')).toEqual({
      reply: 'Echo: How do I deploy?',
      runbook_proposal: null,
    });
    expect(await anthropicToolInput('extract_entities', "The Quarterly Report mentions Alice's Team. The Quarterly Report again.")).toEqual(
      {
        entities: [
          { name: 'Quarterly Report', type: 'concept', aliases: [] },
          { name: 'Alice', type: 'person', aliases: [] },
          { name: 'Team', type: 'concept', aliases: [] },
        ],
      },
    );
    expect(await anthropicToolInput('extract_entities', 'nothing here')).toEqual({ entities: [] });
  });

  it('refuses a tool it does not know, without retry', async () => {
    const err = await rejection(openaiStructured(openai('sk-test', 2), 'unknown_tool', 'x'));
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(server.calls).toHaveLength(1);
  });
});

describe('reset', () => {
  it('clears calls, faults, keys, down and the handler', async () => {
    server.validKeys.add('k');
    server.failNext('openai', 3);
    server.down('anthropic', true);
    server.respond(() => 'custom');
    await rejection(openaiStructured(openai(), 'summarize', 'x'));

    server.reset();
    expect(server.calls).toHaveLength(0);
    const text = await anthropic('any').messages.create({ model: MODEL_A, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    expect(text.content).toEqual([{ type: 'text', text: 'Echo: hi', citations: null }]);
    await expect(openaiStructured(openai('any'), 'summarize', 'Fine.')).resolves.toBeDefined();
    expect(server.calls.map((c) => c.status)).toEqual([200, 200]);
  });
});
