import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { z } from 'zod';
import type { LlmTask, LlmUsage } from '../../domain/llm/port.ts';

export type Protocol = 'anthropic' | 'openai';

export interface ClientOptions {
  apiKey: string;
  baseUrl: string | undefined;
  timeoutMs: number;
  maxRetries: number;
}

// The model's raw structured answer (not yet validated), or null when it answered something else, with the
// tokens the call took.
export type Caller = (task: LlmTask<unknown>, model: string) => Promise<{ raw: unknown; usage: LlmUsage }>;

// Both SDKs retry connection errors, 408, 409, 429 and 5xx with backoff, honour retry-after, and time out
// each attempt; nothing here retries on its own.
export function protocolCaller(protocol: Protocol, options: ClientOptions): Caller {
  return protocol === 'anthropic' ? anthropicCaller(options) : openaiCaller(options);
}

function jsonSchema(task: LlmTask<unknown>): Record<string, unknown> {
  return z.toJSONSchema(task.schema, { target: 'draft-7' }) as Record<string, unknown>;
}

// Structured output through one forced tool: the answer is the tool call's input.
function anthropicCaller(options: ClientOptions): Caller {
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
  });
  return async (task, model) => {
    const message = await client.messages.create({
      model,
      max_tokens: task.maxTokens,
      system: task.system,
      messages: task.messages,
      tools: [{ name: task.name, description: task.description, input_schema: jsonSchema(task) as Anthropic.Tool.InputSchema }],
      tool_choice: { type: 'tool', name: task.name },
    });
    const call = message.content.find((block) => block.type === 'tool_use' && block.name === task.name);
    const usage = { input: message.usage?.input_tokens ?? 0, output: message.usage?.output_tokens ?? 0 };
    return { raw: call && call.type === 'tool_use' ? call.input : null, usage };
  };
}

// Structured output through a strict JSON schema response format: the answer is the message text as JSON.
function openaiCaller(options: ClientOptions): Caller {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseUrl,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
  });
  return async (task, model) => {
    const completion = await client.chat.completions.create({
      model,
      max_completion_tokens: task.maxTokens,
      messages: [{ role: 'system', content: task.system }, ...task.messages],
      response_format: {
        type: 'json_schema',
        json_schema: { name: task.name, description: task.description, schema: jsonSchema(task), strict: true },
      },
    });
    const text = completion.choices[0]?.message.content;
    const usage = { input: completion.usage?.prompt_tokens ?? 0, output: completion.usage?.completion_tokens ?? 0 };
    if (!text) return { raw: null, usage };
    try {
      return { raw: JSON.parse(text) as unknown, usage };
    } catch {
      return { raw: null, usage };
    }
  };
}
