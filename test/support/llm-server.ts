import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { freePort } from './ports.ts';

export type LlmProtocol = 'anthropic' | 'openai';
/** What the fault switches address: one chat protocol, or the OpenAI embeddings route on its own, so that
 * faults meant for the embedding model are not spent on the chat model's requests (or the other way round). */
export type LlmEndpoint = LlmProtocol | 'embeddings';

export interface LlmCall {
  protocol: LlmProtocol;
  apiKey: string;
  model: string;
  system: string;
  /** The conversation without the system prompt, each content flattened to its text. In both protocols a tool's
   * result is a message of role `tool` holding the result's text (Anthropic's `tool_result` blocks are taken out
   * of their user message, which stays only if it holds more), and a tool call the model made reads
   * `name({"the":"input"})` in its assistant message. */
  messages: { role: string; content: string }[];
  /** The tools the request offered: `schema` is the input's JSON schema (none for an Anthropic built-in tool),
   * `type` an Anthropic built-in tool's versioned type such as `memory_20250818`. */
  tools: { name: string; schema?: unknown; type?: string }[];
  /** Present when the request asked for structured output. */
  tool?: { name: string; schema: unknown };
  /** Present for `POST /v1/embeddings`: the texts (a single string input as one text) and the width asked for. */
  embeddings?: { input: string[]; dimensions: number | undefined };
  /** The HTTP status this server answered. */
  status: number;
  /** The parsed JSON request body, for assertions on anything else the service sent. */
  body: unknown;
}

export type LlmHandler = (call: LlmCall) => unknown | Promise<unknown>;

/** The vectors to answer an embeddings call with, in input order; any width, count or value goes (NaN reaches
 * the client as null), so a test can script garbage. */
export type EmbeddingHandler = (call: LlmCall) => number[][] | Promise<number[][]>;

/** Literal model output, returned as text even when structured output was requested. */
export class RawText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** Tool calls the model chooses to make, answered as Anthropic `tool_use` blocks or OpenAI `tool_calls`. */
export class ToolCalls {
  readonly calls: { name: string; input: unknown }[];
  constructor(calls: { name: string; input: unknown }[]) {
    this.calls = calls;
  }
}

type Headers = Record<string, string>;

// A local stand-in for the Anthropic Messages API and the OpenAI Chat Completions and Embeddings APIs, driven
// by the official clients with `baseURL` pointed here. Records every request, and answers with scripted faults,
// 401s for unknown keys, or the handler's answer (a tiny deterministic model by default).
export class LlmServer {
  readonly calls: LlmCall[] = [];
  readonly validKeys = new Set<string>();
  #faults: Record<LlmEndpoint, number[]> = { anthropic: [], openai: [], embeddings: [] };
  #down: Record<LlmEndpoint, boolean> = { anthropic: false, openai: false, embeddings: false };
  #delayMs: Record<LlmEndpoint, number> = { anthropic: 0, openai: 0, embeddings: 0 };
  #handler: LlmHandler = defaultHandler;
  #embeddingHandler: EmbeddingHandler = defaultEmbeddings;
  #maxInputTokens = Infinity;
  #server: Server | undefined;
  #url = '';

  static raw(text: string): RawText {
    return new RawText(text);
  }

  /** A handler's answer that calls tools the request offered: `LlmServer.toolCalls([{ name, input }])`. */
  static toolCalls(calls: { name: string; input: unknown }[]): ToolCalls {
    return new ToolCalls(calls);
  }

  /** `http://127.0.0.1:PORT`: the Anthropic client's baseURL; the OpenAI client's is `${url}/v1`. */
  get url(): string {
    return this.#url;
  }

  async start(): Promise<void> {
    const port = await freePort();
    this.#server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => void this.#handle(req, body, res));
    });
    await new Promise<void>((r) => this.#server!.listen(port, '127.0.0.1', () => r()));
    this.#url = `http://127.0.0.1:${port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  /** The next `count` requests of `endpoint` answer `status` with that protocol's error body. */
  failNext(endpoint: LlmEndpoint, count: number, status = 500): void {
    for (let i = 0; i < count; i++) this.#faults[endpoint].push(status);
  }

  /** While down, every request of `endpoint` answers 503. */
  down(endpoint: LlmEndpoint, isDown: boolean): void {
    this.#down[endpoint] = isDown;
  }

  /** Every request of `endpoint` waits `ms` before it is answered (0 again for no wait), to trip client timeouts. */
  slow(endpoint: LlmEndpoint, ms: number): void {
    this.#delayMs[endpoint] = ms;
  }

  respond(handler: LlmHandler): void {
    this.#handler = handler;
  }

  respondEmbeddings(handler: EmbeddingHandler): void {
    this.#embeddingHandler = handler;
  }

  /** The service's EMBEDDING_* settings that make this server its embedding provider: no client retries and a
   * 1 s limit, so that faults show at once. */
  embeddingEnv(): Record<string, string> {
    return {
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_BASE_URL: `${this.url}/v1`,
      EMBEDDING_API_KEY: 'sk-embeddings',
      EMBEDDING_MODEL: 'embed-test',
      EMBEDDING_MAX_RETRIES: '0',
      EMBEDDING_TIMEOUT_MS: '1000',
    };
  }

  /** Refuses, as OpenAI does past 8,192 tokens, any embeddings request holding a text longer than `tokens`
   * (counted as this server counts them): HTTP 400 for the whole request. */
  limitEmbeddingInput(tokens: number): void {
    this.#maxInputTokens = tokens;
  }

  reset(): void {
    this.calls.length = 0;
    this.validKeys.clear();
    this.#faults = { anthropic: [], openai: [], embeddings: [] };
    this.#down = { anthropic: false, openai: false, embeddings: false };
    this.#delayMs = { anthropic: 0, openai: 0, embeddings: 0 };
    this.#handler = defaultHandler;
    this.#embeddingHandler = defaultEmbeddings;
    this.#maxInputTokens = Infinity;
  }

  async #handle(req: IncomingMessage, text: string, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const routed: LlmEndpoint | undefined =
      req.method === 'POST' && path === '/v1/messages'
        ? 'anthropic'
        : req.method === 'POST' && path === '/v1/chat/completions'
          ? 'openai'
          : req.method === 'POST' && path === '/v1/embeddings'
            ? 'embeddings'
            : undefined;
    // An unknown route still answers in the format of the client that asked.
    const endpoint = routed ?? (req.headers['anthropic-version'] || req.headers['x-api-key'] ? 'anthropic' : 'openai');
    const protocol = endpoint === 'embeddings' ? 'openai' : endpoint;
    const { call, problem } = parseCall(endpoint, req.headers, text);
    this.calls.push(call);
    const fail = (status: number, message: string, headers: Headers = {}): void => {
      call.status = status;
      sendError(res, protocol, status, message, headers);
    };

    if (!routed) return fail(404, `Not found: ${req.method} ${path}`);
    if (this.#delayMs[endpoint] > 0) await new Promise((resolve) => setTimeout(resolve, this.#delayMs[endpoint]));
    if (this.#down[endpoint]) return fail(503, 'Service unavailable.');
    const fault = this.#faults[endpoint].shift();
    if (fault !== undefined) return fail(fault, faultMessage(fault), fault === 429 ? { 'retry-after': '0' } : {});
    if (this.validKeys.size > 0 && !this.validKeys.has(call.apiKey)) {
      return fail(401, protocol === 'anthropic' ? 'invalid x-api-key' : `Incorrect API key provided: ${call.apiKey}.`);
    }
    if (problem) return fail(400, problem);
    const longest = Math.max(0, ...(call.embeddings?.input ?? []).map((text) => tokens(text)));
    if (longest > this.#maxInputTokens) {
      return fail(
        400,
        `This model's maximum context length is ${this.#maxInputTokens} tokens, however you requested ${longest} tokens. Please reduce your prompt.`,
      );
    }

    call.status = 200;
    let reply: string;
    try {
      if (endpoint === 'embeddings') {
        reply = JSON.stringify(embeddingsAnswer(call, await this.#embeddingHandler(call)));
      } else {
        const answer = await this.#handler(call);
        if (!(answer instanceof RawText) && !(answer instanceof ToolCalls) && !call.tool && typeof answer !== 'string') {
          throw new Error(`handler returned ${typeof answer} for a request without structured output; return a string`);
        }
        const unoffered = answer instanceof ToolCalls ? answer.calls.find((c) => !call.tools.some((t) => t.name === c.name)) : undefined;
        if (unoffered) throw new Error(`handler called tool ${unoffered.name}, which the request did not offer`);
        reply = JSON.stringify(protocol === 'anthropic' ? anthropicAnswer(call, answer) : openaiAnswer(call, answer));
      }
    } catch (err) {
      // A broken handler is a bug in the test, not a transient fault: tell the client not to retry it.
      return fail(500, `LlmServer handler failed: ${err instanceof Error ? err.message : String(err)}`, { 'x-should-retry': 'false' });
    }
    send(res, protocol, 200, reply);
  }
}

function parseCall(endpoint: LlmEndpoint, headers: IncomingHttpHeaders, text: string): { call: LlmCall; problem?: string } {
  const bearer = /^Bearer\s+(.*)$/i.exec(headers.authorization ?? '')?.[1] ?? '';
  const protocol = endpoint === 'embeddings' ? 'openai' : endpoint;
  // Anthropic's own key header wins; its client 1.x sends the key as a bearer token.
  const apiKey = protocol === 'anthropic' ? (headerValue(headers['x-api-key']) ?? bearer) : bearer;
  const call: LlmCall = { protocol, apiKey, model: '', system: '', messages: [], tools: [], status: 0, body: undefined };
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isRecord(parsed)) return { call, problem: 'The request body must be a JSON object.' };
    body = parsed;
  } catch {
    return { call, problem: 'The request body is not valid JSON.' };
  }
  call.body = body;
  if (typeof body.model === 'string') call.model = body.model;
  const messages = Array.isArray(body.messages) ? body.messages.filter(isRecord) : [];
  const problem =
    endpoint === 'embeddings'
      ? parseEmbeddings(body, call)
      : endpoint === 'anthropic'
        ? parseAnthropic(body, messages, call)
        : parseOpenai(body, messages, call);
  return problem ? { call, problem } : { call };
}

function parseAnthropic(body: Record<string, unknown>, messages: Record<string, unknown>[], call: LlmCall): string | undefined {
  call.system = flattenContent(body.system);
  call.messages = messages.flatMap(anthropicMessages);
  const tools = Array.isArray(body.tools) ? body.tools.filter(isRecord) : [];
  // A built-in tool (`{ type: 'memory_20250818', name: 'memory' }`) has a versioned type and no input_schema.
  call.tools = tools.map((t) => ({ name: String(t.name), schema: t.input_schema, ...(builtIn(t) ? { type: String(t.type) } : {}) }));
  const choice = body.tool_choice;
  if (isRecord(choice) && choice.type === 'tool') {
    const tool = call.tools.find((t) => t.name === choice.name);
    if (!tool) return `tool_choice names tool ${String(choice.name)}, which is not in tools.`;
    call.tool = { name: tool.name, schema: tool.schema };
  }
  if (typeof body.model !== 'string') return 'model: Field required';
  if (!Array.isArray(body.messages)) return 'messages: Field required';
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (body.stream) return 'LlmServer does not stream.';
  const schemaless = tools.findIndex((t) => !builtIn(t) && !isRecord(t.input_schema));
  if (schemaless >= 0) return `tools.${schemaless}.input_schema: Field required`;
  return undefined;
}

function builtIn(tool: Record<string, unknown>): boolean {
  return typeof tool.type === 'string' && tool.type !== 'custom';
}

// Tool results come first in their user message (the API's rule); each becomes a message of role `tool`.
function anthropicMessages(message: Record<string, unknown>): { role: string; content: string }[] {
  const role = String(message.role);
  if (!Array.isArray(message.content)) return [{ role, content: flattenContent(message.content) }];
  const isResult = (b: unknown): b is Record<string, unknown> => isRecord(b) && b.type === 'tool_result';
  const results = message.content.filter(isResult).map((b) => ({ role: 'tool', content: flattenContent(b.content) }));
  const rest = message.content.filter((b) => !isResult(b));
  return rest.length > 0 || results.length === 0 ? [...results, { role, content: flattenContent(rest) }] : results;
}

function parseOpenai(body: Record<string, unknown>, messages: Record<string, unknown>[], call: LlmCall): string | undefined {
  const systemAt = messages.findIndex((m) => m.role === 'system' || m.role === 'developer');
  if (systemAt >= 0) call.system = flattenContent(messages[systemAt]!.content);
  call.messages = messages
    .filter((_, i) => i !== systemAt)
    .map((m) => ({ role: String(m.role), content: [flattenContent(m.content), ...openaiToolCalls(m)].filter(Boolean).join('\n') }));
  const tools = Array.isArray(body.tools) ? body.tools.filter(isRecord) : [];
  call.tools = tools.flatMap((t) =>
    t.type === 'function' && isRecord(t.function) ? [{ name: String(t.function.name), schema: t.function.parameters }] : [],
  );
  const format = body.response_format;
  if (isRecord(format) && format.type === 'json_schema') {
    const spec = format.json_schema;
    if (!isRecord(spec) || typeof spec.name !== 'string') {
      return "Missing required parameter: 'response_format.json_schema.name'.";
    }
    call.tool = { name: spec.name, schema: spec.schema };
  }
  if (typeof body.model !== 'string') return 'you must provide a model parameter';
  if (!Array.isArray(body.messages)) return "Missing required parameter: 'messages'.";
  if (body.stream) return 'LlmServer does not stream.';
  return undefined;
}

// Texts only (the real API also takes token arrays), answered as floats (the client's own default is base64).
function parseEmbeddings(body: Record<string, unknown>, call: LlmCall): string | undefined {
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  const texts = Array.isArray(input) && input.every((t) => typeof t === 'string' && t !== '') ? (input as string[]) : undefined;
  const dimensions = body.dimensions;
  if (texts) call.embeddings = { input: texts, dimensions: typeof dimensions === 'number' ? dimensions : undefined };
  if (typeof body.model !== 'string') return 'you must provide a model parameter';
  if (!texts || texts.length === 0 || texts.length > 2048)
    return "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.";
  if (dimensions !== undefined && !(Number.isInteger(dimensions) && (dimensions as number) > 0))
    return `Invalid value for 'dimensions' = ${String(dimensions)}. Must be a positive integer.`;
  if (body.encoding_format !== undefined && body.encoding_format !== 'float') return 'LlmServer answers encoding_format float only.';
  return undefined;
}

// An assistant message's tool calls, as `name(arguments)`.
function openaiToolCalls(message: Record<string, unknown>): string[] {
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : [];
  return calls.flatMap((c) => (isRecord(c.function) ? [`${String(c.function.name)}(${String(c.function.arguments)})`] : []));
}

// Content is a string or an array of blocks/parts; their text matters here, and a tool_use block as `name(input)`.
function flattenContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isRecord)
    .flatMap((b) =>
      typeof b.text === 'string' ? [b.text] : b.type === 'tool_use' ? [`${String(b.name)}(${JSON.stringify(b.input)})`] : [],
    )
    .join('\n');
}

function anthropicAnswer(call: LlmCall, answer: unknown): unknown {
  const text = answer instanceof RawText ? answer.text : typeof answer === 'string' ? answer : undefined;
  const toolUse = (name: string, input: unknown) => ({ type: 'tool_use', id: `toolu_${hexId()}`, name, input, caller: { type: 'direct' } });
  const content =
    answer instanceof ToolCalls
      ? answer.calls.map((c) => toolUse(c.name, c.input))
      : text !== undefined || !call.tool
        ? [{ type: 'text', text: text ?? '', citations: null }]
        : [toolUse(call.tool.name, answer)];
  return {
    id: `msg_${hexId()}`,
    type: 'message',
    role: 'assistant',
    model: call.model,
    content,
    stop_reason: content[0]!.type === 'tool_use' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: {
      input_tokens: promptTokens(call),
      output_tokens: tokens(text ?? JSON.stringify(answer)),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: null,
      inference_geo: null,
      output_tokens_details: null,
      server_tool_use: null,
      service_tier: 'standard',
      speed: null,
    },
  };
}

function openaiAnswer(call: LlmCall, answer: unknown): unknown {
  const calls = answer instanceof ToolCalls ? answer.calls : undefined;
  const content = calls ? null : answer instanceof RawText ? answer.text : call.tool ? JSON.stringify(answer) : String(answer);
  const toolCalls = calls?.map((c) => ({
    id: `call_${hexId()}`,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.input) },
  }));
  const promptTokenCount = promptTokens(call);
  const completionTokens = tokens(content ?? JSON.stringify(toolCalls));
  return {
    id: `chatcmpl-${hexId()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: call.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [], ...(toolCalls ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: toolCalls ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: promptTokenCount, completion_tokens: completionTokens, total_tokens: promptTokenCount + completionTokens },
    service_tier: 'default',
    system_fingerprint: 'fp_llmserver',
  };
}

function embeddingsAnswer(call: LlmCall, vectors: number[][]): unknown {
  const promptTokens = tokens(call.embeddings!.input.join(' '));
  return {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model: call.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

function sendError(res: ServerResponse, protocol: LlmProtocol, status: number, message: string, headers: Headers): void {
  if (protocol === 'anthropic') {
    const type =
      status === 400
        ? 'invalid_request_error'
        : status === 401
          ? 'authentication_error'
          : status === 403
            ? 'permission_error'
            : status === 404
              ? 'not_found_error'
              : status === 429
                ? 'rate_limit_error'
                : status === 504
                  ? 'timeout_error'
                  : status === 529
                    ? 'overloaded_error'
                    : 'api_error';
    send(res, protocol, status, JSON.stringify({ type: 'error', error: { type, message }, request_id: `req_${hexId()}` }), headers);
    return;
  }
  const [type, code] =
    status === 401
      ? ['invalid_request_error', 'invalid_api_key']
      : status === 429
        ? ['requests', 'rate_limit_exceeded']
        : status >= 500
          ? ['server_error', null]
          : ['invalid_request_error', null];
  send(res, protocol, status, JSON.stringify({ error: { message, type, param: null, code } }), headers);
}

function send(res: ServerResponse, protocol: LlmProtocol, status: number, json: string, headers: Headers = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    [protocol === 'anthropic' ? 'request-id' : 'x-request-id']: `req_${hexId()}`,
    ...headers,
  });
  res.end(json);
}

function faultMessage(status: number): string {
  return status === 429
    ? 'Rate limited. Please retry after a moment.'
    : status === 529
      ? 'Overloaded'
      : status === 503
        ? 'Service unavailable.'
        : status >= 500
          ? 'Internal server error'
          : `Scripted failure (${status})`;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hexId(): string {
  return randomUUID().replaceAll('-', '');
}

function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function promptTokens(call: LlmCall): number {
  return tokens(call.system + call.messages.map((m) => m.content).join(''));
}

// The default handler: a tiny deterministic model, so tests of the service need no scripting.
function defaultHandler(call: LlmCall): unknown {
  const user = lastUserMessage(call);
  const tool = call.tool?.name;
  switch (tool) {
    case undefined:
      return `Echo: ${user}`;
    case 'extract_entities':
      return { entities: extractEntities(user) };
    case 'summarize':
      return { synopsis: (sentences(user)[0] ?? '').slice(0, 200) };
    case 'extract_facts':
      return { facts: sentences(user).slice(0, 10) };
    case 'check_contradiction': {
      const [a, b] = twoTexts(user);
      const contradicts = negated(a) !== negated(b);
      return {
        contradicts,
        explanation: contradicts ? 'Exactly one of the two statements is negated.' : 'The two statements agree.',
      };
    }
    case 'merge_memories': {
      const [a, b] = twoTexts(user);
      return { merged: [a, b].filter(Boolean).join(' '), had_conflict: negated(a) !== negated(b) };
    }
    case 'chat_reply':
      return { reply: `Echo: ${user}`, runbook_proposal: null };
    default:
      throw new Error(`the default handler knows no tool ${tool}; call respond()`);
  }
}

// The service fences user data in <memory ...> tags; the tiny model reads the text inside them.
function lastUserMessage(call: LlmCall): string {
  return (call.messages.findLast((m) => m.role === 'user')?.content ?? '').replace(/<\/?memory\b[^>]*>/g, '').trim();
}

function sentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .split(/(?<=[.!?])\s+/)
    .filter((s) => s.length > 0);
}

// The two texts of a comparison prompt, separated by a line `---`.
function twoTexts(text: string): [string, string] {
  const [a = '', ...rest] = text.split(/^\s*---\s*$/m);
  return [a.trim(), rest.join('\n').trim()];
}

function negated(text: string): boolean {
  return /\bnot\b|\bno longer\b/i.test(text);
}

const LEADING_WORDS = new Set(
  'a an and after also at before but by for from he her his i if in it its my no of on or our she so that the their then there these they this those to we when while with you your'.split(
    ' ',
  ),
);
const ORGANIZATIONS = new Set('acme amazon anthropic apple aws github google ibm meta microsoft netflix openai oracle stripe'.split(' '));
const ORGANIZATION_SUFFIXES = new Set('co corp corporation gmbh inc labs llc ltd'.split(' '));
const PEOPLE = new Set('alice bob carol dave eve frank grace heidi mallory oscar peggy trent victor walter'.split(' '));
const LOCATIONS = new Set([
  'amsterdam',
  'berlin',
  'dublin',
  'europe',
  'france',
  'germany',
  'japan',
  'london',
  'madrid',
  'new york',
  'paris',
  'rome',
  'san francisco',
  'tokyo',
]);
const TECHNOLOGIES = new Set(
  'docker javascript kafka kubernetes linux node postgres postgresql python redis rust temporal typescript'.split(' '),
);

function extractEntities(text: string): { name: string; type: string; aliases: string[] }[] {
  const seen = new Set<string>();
  const entities: { name: string; type: string; aliases: string[] }[] = [];
  const phrases = [...text.matchAll(/\b[A-Z][\w&'-]*(?:[ \t]+[A-Z][\w&'-]*)*/g)].flatMap(([p]) => p.split(/'s(?:\s+|$)/));
  for (const phrase of phrases) {
    const words = phrase.split(/\s+/).filter(Boolean);
    while (words.length > 0 && LEADING_WORDS.has(words[0]!.toLowerCase())) words.shift();
    const name = words.join(' ');
    if (!name || seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    entities.push({ name, type: entityType(words.map((w) => w.toLowerCase())), aliases: [] });
  }
  return entities;
}

function entityType(words: string[]): string {
  if (words.some((w) => ORGANIZATIONS.has(w)) || ORGANIZATION_SUFFIXES.has(words.at(-1)!)) return 'organization';
  if (PEOPLE.has(words[0]!)) return 'person';
  if (LOCATIONS.has(words.join(' ')) || words.some((w) => LOCATIONS.has(w))) return 'location';
  if (words.some((w) => TECHNOLOGIES.has(w))) return 'technology';
  return 'concept';
}

// The default embedding model: each text's lowercase words hashed into `dimensions` buckets (384 unless the
// request asks otherwise), as a unit vector, so texts that share words get similar vectors.
export function defaultEmbeddings(call: LlmCall): number[][] {
  const { input, dimensions = 384 } = call.embeddings!;
  return input.map((text) => bagOfWordsVector(text, dimensions));
}

/** The default embedding model's vector for `text`, for tests that compare against it. */
export function bagOfWordsVector(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  // A text without words (say "?") still gets a vector of its own.
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [text]) {
    vector[createHash('sha256').update(word).digest().readUInt32BE(0) % dimensions]! += 1;
  }
  const norm = Math.hypot(...vector);
  return vector.map((x) => x / norm);
}
