import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EMBEDDING_DIMENSIONS } from '../../domain/store/embedder.ts';
import { AppError } from '../../domain/errors.ts';
import { createOpenAiEmbedder, type OpenAiEmbedderOptions } from '../../infra/embeddings/openai.ts';
import { bagOfWordsVector, LlmServer, type EmbeddingHandler } from '../support/llm-server.ts';

const server = new LlmServer();
const KEY = 'sk-embeddings-test';

beforeAll(() => server.start());
afterAll(() => server.close());
beforeEach(() => server.reset());

function embedder(options: Partial<OpenAiEmbedderOptions> = {}) {
  return createOpenAiEmbedder({
    baseURL: `${server.url}/v1`,
    apiKey: KEY,
    model: 'embed-test',
    timeoutMs: 5000,
    maxRetries: 0,
    ...options,
  });
}

async function unavailable(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ kind: 'unavailable', error: 'embeddings_unavailable' });
  return err as AppError;
}

const maxDifference = (a: ArrayLike<number>, b: ArrayLike<number>) => Math.max(...Array.from(a, (x, i) => Math.abs(x - b[i]!)));
const expected = (text: string) => bagOfWordsVector(text, EMBEDDING_DIMENSIONS);
const each =
  (vector: (text: string) => number[]): EmbeddingHandler =>
  (call) =>
    call.embeddings!.input.map(vector);

describe('the OpenAI embeddings client', () => {
  it('answers one unit vector per text, in order, asking for the stored width as floats', async () => {
    const texts = ['Deploys happen on Tuesdays', 'Alice prefers tea', 'the tea is hot'];
    const e = embedder();
    const vectors = await e.embedDocuments(texts);

    expect(e.model).toBe('embed-test');
    expect(vectors).toHaveLength(3);
    texts.forEach((text, i) => expect(maxDifference(vectors[i]!, expected(text))).toBeLessThan(1e-6));
    expect(server.calls).toHaveLength(1);
    expect(server.calls[0]).toMatchObject({
      protocol: 'openai',
      apiKey: KEY,
      model: 'embed-test',
      status: 200,
      embeddings: { input: texts, dimensions: EMBEDDING_DIMENSIONS },
    });
    expect(server.calls[0]!.body).toMatchObject({ encoding_format: 'float' });
    expect(await e.embedDocuments([])).toEqual([]);
    expect(server.calls).toHaveLength(1);
  });

  it('scales vectors to unit length', async () => {
    server.respondEmbeddings((call) =>
      call.embeddings!.input.map((_, i) => Array.from({ length: EMBEDDING_DIMENSIONS }, (_, j) => (j === i ? 3 : 0) + 1)),
    );
    const vectors = await embedder().embedDocuments(['a', 'b']);
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(vectors[0]![0]).toBeGreaterThan(vectors[1]![0]!);
  });

  it('splits many texts over several requests and keeps their order', async () => {
    const texts = Array.from({ length: 300 }, (_, i) => `memory number ${i}`);
    const vectors = await embedder().embedDocuments(texts);
    expect(server.calls.map((c) => c.embeddings!.input.length)).toEqual([256, 44]);
    expect(maxDifference(vectors[299]!, expected(texts[299]!))).toBeLessThan(1e-6);
  });

  it('puts the query prefix before queries only', async () => {
    const e = embedder({ queryPrefix: 'query: ' });
    await e.embedQueries(['when do we ship']);
    await e.embedDocuments(['we ship on Tuesdays']);
    expect(server.calls.map((c) => c.embeddings!.input)).toEqual([['query: when do we ship'], ['we ship on Tuesdays']]);
    await embedder().embedQueries(['plain']);
    expect(server.calls[2]!.embeddings!.input).toEqual(['plain']);
  });

  it('is unavailable while the provider is down, and when it answers 5xx after the retries', async () => {
    server.down('embeddings', true);
    expect((await unavailable(embedder().embedQueries(['x']))).detail).toContain('HTTP 503');
    // The chat route of the same protocol is not affected.
    await expect(
      new OpenAI({ apiKey: KEY, baseURL: `${server.url}/v1`, maxRetries: 0 }).chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    ).resolves.toBeDefined();
    server.down('embeddings', false);

    server.failNext('embeddings', 2, 500);
    expect((await unavailable(embedder({ maxRetries: 1 }).embedQueries(['x']))).detail).toContain('HTTP 500');
    server.failNext('embeddings', 1, 500);
    await expect(embedder({ maxRetries: 1 }).embedQueries(['x'])).resolves.toHaveLength(1);
    expect(server.calls.map((c) => c.status)).toEqual([503, 200, 500, 500, 500, 200]);
  });

  it('cuts each text to maxInputChars before sending it, never inside a surrogate pair', async () => {
    const long = 'word '.repeat(5_000);
    await embedder({ maxInputChars: 1_000 }).embedDocuments([long, 'short']);
    expect(server.calls[0]!.embeddings!.input).toEqual([long.slice(0, 1_000), 'short']);
    const emoji = 'a'.repeat(99) + '😀' + 'b';
    await embedder({ maxInputChars: 100 }).embedDocuments([emoji]);
    expect(server.calls[1]!.embeddings!.input).toEqual(['a'.repeat(99)]);
  });

  it('calls texts the provider refuses (HTTP 400) embedding_input_refused, and does not retry them', async () => {
    server.limitEmbeddingInput(50);
    const err = await embedder({ maxRetries: 2 })
      .embedDocuments(['short', 'long '.repeat(100)])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      kind: 'upstream',
      error: 'embedding_input_refused',
      detail: 'the embedding provider refused the texts (HTTP 400)',
    });
    expect(server.calls.map((c) => c.status)).toEqual([400]);
  });

  it('is unavailable when the provider cannot be reached', async () => {
    const e = createOpenAiEmbedder({ baseURL: 'http://127.0.0.1:9/v1', apiKey: KEY, model: 'm', timeoutMs: 2000, maxRetries: 0 });
    expect((await unavailable(e.embedQueries(['x']))).detail).toBe('the embedding provider could not be reached');
  });

  it("gives a search's query its own short time limit and at most one retry; stored texts keep the patient ones", async () => {
    server.slow('embeddings', 600);
    const e = embedder({ timeoutMs: 5000, queryTimeoutMs: 200, maxRetries: 0 });
    const started = performance.now();
    expect((await unavailable(e.embedQueries(['x']))).detail).toBe('the embedding provider did not answer in time');
    expect(performance.now() - started).toBeLessThan(550);
    await expect(e.embedDocuments(['x'])).resolves.toHaveLength(1);

    server.reset();
    server.failNext('embeddings', 10, 429);
    await unavailable(embedder({ maxRetries: 3 }).embedQueries(['x']));
    expect(server.calls).toHaveLength(2);
    await unavailable(embedder({ maxRetries: 3 }).embedDocuments(['x']));
    expect(server.calls).toHaveLength(6);
  });

  it('is unavailable when the provider is slower than the time limit', async () => {
    server.slow('embeddings', 1000);
    const started = performance.now();
    expect((await unavailable(embedder({ timeoutMs: 200 }).embedQueries(['x']))).detail).toBe(
      'the embedding provider did not answer in time',
    );
    expect(performance.now() - started).toBeLessThan(900);
  });

  it('says the key was refused on 401 and 403, without quoting it', async () => {
    server.validKeys.add('sk-other');
    const refused = await unavailable(embedder().embedDocuments(['x']));
    expect(refused.detail).toBe('the embedding provider refused the API key (HTTP 401)');
    server.failNext('embeddings', 1, 403);
    expect((await unavailable(embedder({ apiKey: 'sk-other' }).embedDocuments(['x']))).detail).toContain('refused the API key (HTTP 403)');
  });

  it.each([
    ['one dimension too few', each(() => new Array<number>(EMBEDDING_DIMENSIONS - 1).fill(0.1))],
    ['the full width of another model', each(() => new Array<number>(1536).fill(0.1))],
    ['NaN (null in JSON)', each((text) => expected(text).map((x, i) => (i === 7 ? NaN : x)))],
    ['a zero vector', each(() => new Array<number>(EMBEDDING_DIMENSIONS).fill(0))],
    ['one vector too few', (call) => call.embeddings!.input.slice(1).map(expected)],
    ['one vector too many', (call) => [...call.embeddings!.input, 'extra'].map(expected)],
  ] satisfies [string, EmbeddingHandler][])('is unavailable when the provider answers %s', async (_, handler) => {
    server.respondEmbeddings(handler);
    await unavailable(embedder().embedDocuments(['one', 'two']));
  });
});

describe('the LlmServer embeddings route', () => {
  const client = () => new OpenAI({ apiKey: KEY, baseURL: `${server.url}/v1`, maxRetries: 0 });

  it('takes one string or an array, honours dimensions, and gives texts that share words similar vectors', async () => {
    const one = await client().embeddings.create({ model: 'm', input: 'Tea for two', dimensions: 8, encoding_format: 'float' });
    expect(one).toMatchObject({ object: 'list', model: 'm', data: [{ object: 'embedding', index: 0 }] });
    expect(one.data[0]!.embedding).toHaveLength(8);
    expect(server.calls[0]!.embeddings).toEqual({ input: ['Tea for two'], dimensions: 8 });

    const many = await client().embeddings.create({
      model: 'm',
      input: ['ship releases on tuesday', 'we ship releases', 'cats like fish'],
      encoding_format: 'float',
    });
    const [a, b, c] = many.data.map((d) => d.embedding);
    const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    expect(a).toHaveLength(384);
    expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!));
  });

  it('refuses what it does not serve with 400', async () => {
    await expect(client().embeddings.create({ model: 'm', input: [] })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client().embeddings.create({ model: 'm', input: 'x' })).rejects.toThrow(/encoding_format float only/);
    expect(server.calls.map((c) => c.status)).toEqual([400, 400]);
  });
});
