import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../../domain/errors.ts';
import type { LlmTask } from '../../domain/llm/port.ts';
import { LlmRouter, type LlmSettings } from '../../infra/llm/router.ts';
import { LlmServer } from '../support/llm-server.ts';

const server = new LlmServer();
beforeAll(() => server.start());
afterAll(() => server.close());
beforeEach(() => server.reset());

const router = (overrides: Partial<LlmSettings> = {}, keys = { primary: 'sk-ant-server', alternate: 'sk-server' }) =>
  new LlmRouter(
    {
      primary: { protocol: 'anthropic', baseUrl: server.url, apiKey: keys.primary, model: 'claude-test' },
      alternate: { protocol: 'openai', baseUrl: `${server.url}/v1`, apiKey: keys.alternate, model: 'gpt-test' },
      timeoutMs: 2000,
      maxRetries: 2,
      ...overrides,
    },
    pino({ level: 'silent' }),
  );

const task: LlmTask<{ synopsis: string }> = {
  name: 'summarize',
  description: 'Record a synopsis.',
  system: 'Summarize.',
  messages: [{ role: 'user', content: 'First sentence. Second one.' }],
  schema: z.strictObject({ synopsis: z.string() }),
  maxTokens: 100,
};

const failure = (err: unknown) => (err instanceof AppError ? err.error : String(err));

describe('LlmRouter', () => {
  it('asks for structured output on both protocols and validates the answer', async () => {
    const first = await router().run(task);
    expect(first).toEqual({
      value: { synopsis: 'First sentence.' },
      via: 'primary',
      usage: { input: expect.any(Number), output: expect.any(Number) },
    });
    // The tokens the provider said the call took.
    expect(first.usage.input).toBeGreaterThan(0);
    expect(first.usage.output).toBeGreaterThan(0);
    const call = server.calls[0]!;
    expect(call).toMatchObject({
      protocol: 'anthropic',
      apiKey: 'sk-ant-server',
      model: 'claude-test',
      system: 'Summarize.',
      tool: { name: 'summarize' },
    });
    expect(call.tool!.schema).toMatchObject({ type: 'object', required: ['synopsis'], additionalProperties: false });
    const alternateOnly = router({}, { primary: '', alternate: 'sk-server' });
    const alternate = await alternateOnly.run(task);
    expect(alternate).toEqual({
      value: { synopsis: 'First sentence.' },
      via: 'alternate',
      usage: { input: expect.any(Number), output: expect.any(Number) },
    });
    expect(alternate.usage.input).toBeGreaterThan(0);
    expect(server.calls.at(-1)).toMatchObject({ protocol: 'openai', tool: { name: 'summarize' } });
  });

  it('retries a server error or rate limit on the same provider before failing over', async () => {
    server.failNext('anthropic', 2, 500);
    expect((await router().run(task)).via).toBe('primary');
    expect(server.calls.map((c) => c.status)).toEqual([500, 500, 200]);
    server.reset();
    server.failNext('anthropic', 1, 429);
    expect((await router().run(task)).via).toBe('primary');
    expect(server.calls.map((c) => c.status)).toEqual([429, 200]);
  });

  it('does not retry a refused key: it fails over at once', async () => {
    server.validKeys.add('sk-server');
    expect((await router().run(task)).via).toBe('alternate');
    expect(server.calls.map((c) => [c.protocol, c.status])).toEqual([
      ['anthropic', 401],
      ['openai', 200],
    ]);
  });

  it('fails over when an attempt times out', async () => {
    server.respond(async (call) => {
      if (call.protocol === 'anthropic') await new Promise((r) => setTimeout(r, 1500));
      return { synopsis: call.protocol };
    });
    const answer = await router({ timeoutMs: 300, maxRetries: 0 }).run(task);
    expect(answer).toMatchObject({ value: { synopsis: 'openai' }, via: 'alternate' });
  });

  it('classifies what went wrong when no provider answers', async () => {
    server.down('anthropic', true);
    server.down('openai', true);
    await expect(router({ maxRetries: 0 }).run(task)).rejects.toSatisfy((e) => failure(e) === 'llm_unavailable');
    server.reset();
    server.validKeys.add('nobody');
    await expect(router().run(task)).rejects.toSatisfy((e) => failure(e) === 'llm_rejected');
    expect(server.calls).toHaveLength(2);
    server.reset();
    server.respond(() => ({ summary: 'wrong field' }));
    await expect(router().run(task)).rejects.toSatisfy((e) => failure(e) === 'llm_malformed_output');
  });

  it('uses BYOK keys alone, never the server keys, and never leaks them into errors', async () => {
    const r = router();
    expect(r.configured({ primary: 'sk-ant-mine' })).toBe(true);
    expect(router({}, { primary: '', alternate: '' }).configured()).toBe(false);
    server.validKeys.add('sk-ant-server');
    const err = await r.run(task, { primary: 'sk-ant-mine' }).catch((e: unknown) => e);
    expect(failure(err)).toBe('llm_rejected');
    expect(String((err as Error).message)).not.toContain('sk-ant-mine');
    expect(server.calls.map((c) => c.apiKey)).toEqual(['sk-ant-mine']);
    server.reset();
    expect(await r.run(task, { primary: 'sk-ant-mine', alternate: 'sk-mine' })).toMatchObject({ via: 'byok' });
    expect(server.calls.map((c) => c.apiKey)).toEqual(['sk-ant-mine']);
  });
});
