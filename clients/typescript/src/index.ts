// A typed client of the memory service: every route through `api` (openapi-fetch over the types generated
// from the service's own OpenAPI document), and the everyday calls as methods that throw typed errors,
// retry what is safe to retry, and page through lists. fetch only: Node 20+ and browsers.
import createClient, { type Client } from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import { unwrap } from './errors.ts';
import { retryingFetch } from './retry.ts';
import type { paths } from './schema.ts';
import type {
  BatchCreateResult,
  BulkSearchBody,
  BulkSearchResult,
  CreateMemoryBody,
  ListBody,
  Memory,
  SearchBody,
  SearchHit,
  SimilarQuery,
  UpdateMemoryBody,
} from './types.ts';

export type { components, operations, paths } from './schema.ts';
export type * from './types.ts';
export { MemoryServiceConnectionError, MemoryServiceError, unwrap, type ErrorBody } from './errors.ts';

export interface MemoryClientOptions {
  // The service's address; on Node.js, MEMORY_SERVICE_URL when omitted.
  baseUrl?: string;
  // An API token (`svc_...`); on Node.js, MEMORY_SERVICE_TOKEN when omitted. None in local mode, or in a
  // browser signed in with the session cookie.
  token?: string;
  // Attempts after the first for a retry-safe call (default 3).
  maxRetries?: number;
  // The longest Retry-After (seconds) a call answered 429 waits out before it goes again (default 60); a longer
  // one is answered at once.
  maxRetryWait?: number;
  fetch?: typeof fetch;
}

// Node's environment when there is one; a browser has none (no Node types: the package builds without them).
const environment = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};

export class MemoryClient {
  // Every route of the API, typed: `client.api.GET('/api/projects')` answers openapi-fetch's
  // `{ data, error, response }`; `unwrap()` turns that into the data or a thrown MemoryServiceError.
  readonly api: Client<paths>;

  constructor(options: MemoryClientOptions = {}) {
    const baseUrl = options.baseUrl ?? environment.MEMORY_SERVICE_URL;
    if (!baseUrl) throw new TypeError('MemoryClient needs a baseUrl (or MEMORY_SERVICE_URL in the environment)');
    const token = options.token ?? environment.MEMORY_SERVICE_TOKEN;
    this.api = createClient<paths>({
      baseUrl: baseUrl.replace(/\/+$/, ''),
      headers: token ? { authorization: `Bearer ${token}` } : {},
      fetch: retryingFetch(options.fetch ?? globalThis.fetch.bind(globalThis), options.maxRetries ?? 3, options.maxRetryWait ?? 60),
    });
  }

  // Saves a memory. Every call carries an Idempotency-Key of its own, so a retried create never duplicates.
  async addMemory(body: CreateMemoryBody, idempotencyKey: string = crypto.randomUUID()): Promise<Memory> {
    return unwrap(await this.api.POST('/api/memories', { body, headers: { 'idempotency-key': idempotencyKey } }));
  }

  // Saves up to 500 memories in one call (one transaction, with its own Idempotency-Key, so it is retried
  // safely). An item that cannot be saved is reported in `failed` with the status and error a single save
  // would get; it does not stop the others and is not thrown.
  async addMemories(memories: CreateMemoryBody[], idempotencyKey: string = crypto.randomUUID()): Promise<BatchCreateResult> {
    return unwrap(await this.api.POST('/api/memories/batch', { body: { memories }, headers: { 'idempotency-key': idempotencyKey } }));
  }

  async getMemory(id: string): Promise<Memory> {
    return unwrap(await this.api.GET('/api/memories/{id}', { params: { path: { id } } }));
  }

  async updateMemory(id: string, patch: UpdateMemoryBody): Promise<Memory> {
    return unwrap(await this.api.PATCH('/api/memories/{id}', { params: { path: { id } }, body: patch }));
  }

  async deleteMemory(id: string): Promise<void> {
    await unwrap(await this.api.DELETE('/api/memories/{id}', { params: { path: { id } } }));
  }

  // The hits, best first; `client.api.POST('/api/memories/search', ...)` has the whole answer (SearchResult).
  async searchMemories(body: SearchBody): Promise<SearchHit[]> {
    return (await unwrap(await this.api.POST('/api/memories/search', { body }))).hits;
  }

  // Up to 25 queries with the same filters in one call; one result per query, in query order.
  async searchMemoriesBulk(body: BulkSearchBody): Promise<BulkSearchResult[]> {
    return (await unwrap(await this.api.POST('/api/memories/search/bulk', { body }))).results;
  }

  // The memories nearest in meaning to memory `id`, best first (it is left out).
  async similarMemories(id: string, query: SimilarQuery = {}): Promise<SearchHit[]> {
    return (await unwrap(await this.api.GET('/api/memories/{id}/similar', { params: { path: { id }, query } }))).hits;
  }

  // Every memory matching the filters, page after page (`limit` per request).
  async *listMemories(filters: Omit<ListBody, 'offset'> = {}): AsyncGenerator<Memory> {
    for (let offset = 0; ;) {
      const page = await unwrap(await this.api.POST('/api/memories/list', { body: { ...filters, offset } }));
      yield* page.memories;
      offset += page.memories.length;
      if (page.memories.length < page.limit || page.memories.length === 0) return;
    }
  }
}

// Checks a webhook delivery from the service (Standard Webhooks: webhook-id, webhook-timestamp and
// webhook-signature headers over the raw body) and returns the event; throws on a bad or stale signature.
export function verifyWebhook(secret: string, rawBody: string, headers: Record<string, string>): { type: string; data: unknown } {
  return new Webhook(secret).verify(rawBody, headers) as { type: string; data: unknown };
}
