import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { embeddingsUnavailable, type Embedder } from '../store/embedder.ts';
import { AppError } from '../errors.ts';
import { type QueryVector } from './semantic.ts';

// Where a query's vector came from: this process's cache of recent queries, or the model.
export type QueryVectorSource = 'cache' | 'model';

// The vectors of search queries, with the latest `entries` of them kept in memory: agents ask the same things
// again (the preferences they look up at the start of every session), and the dashboard searches the same words
// again under other filters. A query asked again skips the model: on the 2-core machine a short one costs the
// local model 4-5 ms (more than half a semantic search's time), a long one up to 18 ms, and a hosted provider a
// round trip and a charge; and it is still answered while the provider is down (docs/api-decisions.md, "Query
// vectors"). A vector is kept for its org alone: an org never gets another org's cached vector, so how fast a
// search answers tells nothing of what other orgs asked. The key is a digest of the org, the model and the text,
// so an entry holds no text and costs the same (about 1.7 KB) however long the question; a switch of model misses.
// At most about 17 MB.
export const DEFAULT_QUERY_VECTOR_CACHE_ENTRIES = 10_000;

// A cached vector's key: a digest of the org, the model and the text (also fresh.ts's, for waiting memories).
export const vectorKey = (orgId: string, model: string, text: string): string =>
  createHash('sha256').update(`${orgId}\0${model}\0${text}`).digest('base64');

export class QueryVectors {
  readonly #embedder: Embedder | null;
  readonly #cache: LRUCache<string, Float32Array> | null;
  readonly #served: (source: QueryVectorSource, count: number) => void;

  constructor(embedder: Embedder | null, entries: number, served: (source: QueryVectorSource, count: number) => void = () => undefined) {
    this.#embedder = embedder;
    this.#cache = entries > 0 ? new LRUCache({ max: entries }) : null;
    this.#served = served;
  }

  // The vectors of an org's queries, in order, those not cached computed in one model call (a text asked twice in
  // one call is embedded once). No embedder, or a failed call, means no semantic answer can be given: 503
  // embeddings_unavailable (lexical search never gets here).
  async of(orgId: string, texts: string[]): Promise<QueryVector[]> {
    const embedder = this.#embedder;
    if (!embedder) throw embeddingsUnavailable('no embedding model is configured on this server');
    const { model } = embedder;
    const keys = texts.map((text) => vectorKey(orgId, model, text));
    // Each distinct text once, by its key.
    const textOf = new Map(keys.map((key, i) => [key, texts[i]!]));
    const vectors = new Map<string, Float32Array>();
    for (const key of textOf.keys()) {
      const cached = this.#cache?.get(key);
      if (cached) vectors.set(key, cached);
    }
    const missing = [...textOf.keys()].filter((key) => !vectors.has(key));
    if (missing.length > 0) {
      const computed = await embed(
        embedder,
        orgId,
        missing.map((key) => textOf.get(key)!),
      );
      missing.forEach((key, i) => {
        vectors.set(key, computed[i]!);
        this.#cache?.set(key, computed[i]!);
      });
    }
    this.#served('cache', texts.length - missing.length);
    this.#served('model', missing.length);
    return keys.map((key) => ({ vector: vectors.get(key)!, model, relevance: embedder.relevance }));
  }
}

async function embed(embedder: Embedder, orgId: string, texts: string[]): Promise<Float32Array[]> {
  try {
    return await embedder.embedQueries(texts, orgId);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw embeddingsUnavailable(`the embedding model failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}
