// A typed client of the memory service: every route through `api` (openapi-fetch over the types generated
// from the service's own OpenAPI document), and the everyday calls as methods that throw typed errors,
// retry what is safe to retry, and page through lists. fetch only: Node 20+ and browsers.
import createClient, { type Client } from 'openapi-fetch';
import { Webhook } from 'standardwebhooks';
import type { components, paths } from './schema.ts';

export type { components, paths };
export type Memory = components['schemas']['Memory'];
type ListBody = NonNullable<paths['/api/memories/list']['post']['requestBody']>['content']['application/json'];
type SearchBody = NonNullable<paths['/api/memories/search']['post']['requestBody']>['content']['application/json'];
type CreateBody = NonNullable<paths['/api/memories']['post']['requestBody']>['content']['application/json'];
type PatchBody = NonNullable<paths['/api/memories/{id}']['patch']['requestBody']>['content']['application/json'];
type SimilarQuery = NonNullable<paths['/api/memories/{id}/similar']['get']['parameters']['query']>;

export interface MemoryClientOptions {
  baseUrl: string;
  // An API token (`svc_...`); omit it in local mode, or in a browser signed in with the session cookie.
  token?: string;
  // Attempts after the first for a retry-safe call (default 3).
  maxRetries?: number;
  fetch?: typeof fetch;
}

// Every error answer of the API: its `error` code, the HTTP status, and the extra fields it carries.
export class MemoryServiceError extends Error {
  readonly status: number;
  readonly error: string;
  readonly body: Record<string, unknown>;
  readonly retryAfter: number | undefined;
  constructor(status: number, body: Record<string, unknown>, retryAfter: number | undefined) {
    super(`${String(body.error ?? `http_${status}`)}: ${String(body.message ?? 'the request failed')}`);
    this.name = 'MemoryServiceError';
    this.status = status;
    this.error = String(body.error ?? `http_${status}`);
    this.body = body;
    this.retryAfter = retryAfter;
  }
  get quota(): { used: number; limit: number; plan: string } | undefined {
    return this.body.quota as { used: number; limit: number; plan: string } | undefined;
  }
  get upgradeUrl(): string | undefined {
    return this.body.upgrade_url as string | undefined;
  }
}

// Section 8 of the contract: a write answered 429 did nothing, so any call may wait Retry-After and go
// again. A 5xx or a network failure may have done the work, so only calls that are safe to repeat retry it:
// reads (GET, and the POSTs that only read), PUT and DELETE, and creates that carry an Idempotency-Key.
const READ_ONLY_POSTS = ['/api/memories/list', '/api/memories/search', '/api/memories/search/bulk'];
const retrySafe = (request: Request): boolean =>
  ['GET', 'HEAD', 'PUT', 'DELETE'].includes(request.method) ||
  request.headers.has('idempotency-key') ||
  (request.method === 'POST' && READ_ONLY_POSTS.includes(new URL(request.url).pathname));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function retryingFetch(inner: typeof fetch, maxRetries: number): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    for (let attempt = 0; ; attempt++) {
      let response: Response | undefined;
      try {
        response = await inner(request.clone());
      } catch (err) {
        if (attempt >= maxRetries || !retrySafe(request)) throw err;
        await sleep(250 * 2 ** attempt);
        continue;
      }
      if (attempt >= maxRetries) return response;
      if (response.status === 429) {
        await sleep(Number(response.headers.get('retry-after') ?? '1') * 1000);
        continue;
      }
      if (response.status >= 500 && retrySafe(request)) {
        await sleep(250 * 2 ** attempt);
        continue;
      }
      return response;
    }
  };
}

export class MemoryClient {
  // Every route of the API, typed: `client.api.GET('/api/projects')`.
  readonly api: Client<paths>;

  constructor(options: MemoryClientOptions) {
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      fetch: retryingFetch(options.fetch ?? globalThis.fetch.bind(globalThis), options.maxRetries ?? 3),
    });
  }

  // Saves a memory. Every call carries an Idempotency-Key of its own, so a retried create never duplicates.
  async addMemory(body: CreateBody, idempotencyKey: string = crypto.randomUUID()): Promise<Memory> {
    return unwrap(await this.api.POST('/api/memories', { body, headers: { 'idempotency-key': idempotencyKey } }));
  }

  async getMemory(id: string): Promise<Memory> {
    return unwrap(await this.api.GET('/api/memories/{id}', { params: { path: { id } } }));
  }

  async updateMemory(id: string, patch: PatchBody): Promise<Memory> {
    return unwrap(await this.api.PATCH('/api/memories/{id}', { params: { path: { id } }, body: patch }));
  }

  async deleteMemory(id: string): Promise<void> {
    await unwrap(await this.api.DELETE('/api/memories/{id}', { params: { path: { id } } }));
  }

  async searchMemories(body: SearchBody) {
    return (await unwrap(await this.api.POST('/api/memories/search', { body }))).hits;
  }

  // The memories nearest in meaning to memory `id`, best first (it is left out).
  async similarMemories(id: string, query: SimilarQuery = {}) {
    return (await unwrap(await this.api.GET('/api/memories/{id}/similar', { params: { path: { id }, query } }))).hits;
  }

  // Every memory matching the filters, page after page (`limit` per request).
  async *listMemories(filters: Omit<ListBody, 'offset'> = {}): AsyncGenerator<Memory> {
    for (let offset = 0; ; ) {
      const page = await unwrap(await this.api.POST('/api/memories/list', { body: { ...filters, offset } }));
      yield* page.memories;
      offset += page.memories.length;
      if (page.memories.length < page.limit || page.memories.length === 0) return;
    }
  }
}

// The data of a `client.api` call, or its error answer thrown as a MemoryServiceError.
export async function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): Promise<T> {
  if (result.response.ok) return result.data as T;
  const retryAfter = result.response.headers.get('retry-after');
  throw new MemoryServiceError(result.response.status, (result.error ?? {}) as Record<string, unknown>, retryAfter ? Number(retryAfter) : undefined);
}

// Checks a webhook delivery from the service (Standard Webhooks: webhook-id, webhook-timestamp and
// webhook-signature headers over the raw body) and returns the event; throws on a bad or stale signature.
export function verifyWebhook(secret: string, rawBody: string, headers: Record<string, string>): { type: string; data: unknown } {
  return new Webhook(secret).verify(rawBody, headers) as { type: string; data: unknown };
}
