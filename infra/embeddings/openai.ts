import OpenAI from 'openai';
import { z } from 'zod';
import {
  EMBEDDING_DIMENSIONS,
  embeddingInputRefused,
  embeddingsUnavailable,
  unitLength,
  type Embedder,
} from '../../domain/store/embedder.ts';
import type { AppError } from '../../domain/errors.ts';

export interface OpenAiEmbedderOptions {
  // Including `/v1`, as the client takes it; the public API when unset.
  baseURL?: string;
  apiKey: string;
  model: string;
  // Per attempt; the client makes up to 1 + maxRetries attempts. For stored texts, embedded in the background.
  timeoutMs: number;
  maxRetries: number;
  // Per attempt for a search's query, which someone is waiting for: it gets one retry, so an unreachable or
  // stalled provider costs a search about twice this before its 503.
  queryTimeoutMs?: number;
  // Put before every query, never before stored texts (for models trained with a query instruction).
  queryPrefix?: string;
  // Texts are cut to this many characters (UTF-16 code units) before they are sent, as the local model keeps a
  // text's first 512 tokens: OpenAI's models take at most 8,192 tokens per input and refuse longer ones.
  maxInputChars?: number;
}

// 16,000 characters stay under 8,192 tokens even for code and identifiers (about 2.5 characters a token).
export const DEFAULT_MAX_INPUT_CHARS = 16_000;
// A hosted provider embeds a short query in well under a second.
export const DEFAULT_QUERY_TIMEOUT_MS = 3_000;

// The API takes at most 2048 inputs and 300,000 tokens per request; 256 memories stay far below both.
const INPUTS_PER_REQUEST = 256;

// Checked rather than trusted: an OpenAI-compatible server may answer any width, NaN (null in JSON) or fewer
// vectors than asked for. z.number() refuses NaN and ±Infinity.
const answerSchema = z.object({
  data: z.array(z.object({ index: z.number().int().min(0), embedding: z.array(z.number()).length(EMBEDDING_DIMENSIONS) })),
});

// Vectors from any server that speaks the OpenAI `/v1/embeddings` protocol. The client retries connection
// errors, timeouts, 408, 409, 429 and 5xx with backoff (as for the LLM calls, infra/llm/protocols.ts); whatever
// still fails, and every answer that is not exactly one vector of EMBEDDING_DIMENSIONS finite numbers per text,
// is embeddingsUnavailable.
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
  });

  async function request(input: string[], attempts: { timeout: number; maxRetries: number }): Promise<Float32Array[]> {
    let answer: unknown;
    try {
      answer = await client.embeddings.create(
        { model: options.model, input, dimensions: EMBEDDING_DIMENSIONS, encoding_format: 'float' },
        attempts,
      );
    } catch (err) {
      throw failure(err);
    }
    const parsed = answerSchema.safeParse(answer);
    if (!parsed.success)
      throw embeddingsUnavailable(`the embedding provider answered something other than ${EMBEDDING_DIMENSIONS}-dimensional vectors`);
    const { data } = parsed.data;
    if (data.length !== input.length)
      throw embeddingsUnavailable(`the embedding provider answered ${data.length} vectors for ${input.length} texts`);
    // Placed by their index, which must name each text once; a zero vector has no direction to compare.
    const vectors: Float32Array[] = new Array(input.length);
    for (const { index, embedding } of data) {
      const vector = unitLength(embedding);
      if (index >= input.length || vectors[index] || !vector)
        throw embeddingsUnavailable('the embedding provider answered an index out of range or twice, or a zero vector');
      vectors[index] = vector;
    }
    return vectors;
  }

  async function embed(texts: string[], attempts: { timeout: number; maxRetries: number }): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    const cut = texts.map((text) => cutAt(text, options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS));
    for (let start = 0; start < cut.length; start += INPUTS_PER_REQUEST)
      vectors.push(...(await request(cut.slice(start, start + INPUTS_PER_REQUEST), attempts)));
    return vectors;
  }

  const prefix = options.queryPrefix ?? '';
  const background = { timeout: options.timeoutMs, maxRetries: options.maxRetries };
  const interactive = {
    timeout: Math.min(options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS, options.timeoutMs),
    maxRetries: Math.min(1, options.maxRetries),
  };
  return {
    model: options.model,
    embedDocuments: (texts) => embed(texts, background),
    embedQueries: (texts) =>
      embed(
        texts.map((text) => prefix + text),
        interactive,
      ),
    // HTTP requests hold nothing that outlives them.
    close: async () => undefined,
  };
}

// The first `max` code units, never ending in half a surrogate pair.
function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max;
  return text.slice(0, end);
}

// The provider's own message stays out: for a refused key it may quote the key.
function failure(err: unknown): AppError {
  const status = (err as { status?: unknown }).status;
  if (status === 401 || status === 403) return embeddingsUnavailable(`the embedding provider refused the API key (HTTP ${status})`);
  // The request itself was refused: its texts (too many tokens, say), since the rest of it is ours and fixed.
  if (status === 400 || status === 413 || status === 422)
    return embeddingInputRefused(`the embedding provider refused the texts (HTTP ${status})`);
  if (typeof status === 'number') return embeddingsUnavailable(`the embedding provider answered HTTP ${status}`);
  return embeddingsUnavailable(
    err instanceof OpenAI.APIConnectionTimeoutError
      ? 'the embedding provider did not answer in time'
      : 'the embedding provider could not be reached',
  );
}
