// What the TypeScript client's users do with it, run unchanged in the runtimes it promises: Node.js 20 (its
// `npm pack` tarball installed into an empty folder) and a real browser (the same package, bundled). It
// receives the client module rather than importing it, so each runtime hands it the build under test.
// Returns what it saw, for the test to check.
import { Webhook } from 'standardwebhooks';
import type * as ClientModule from '../../clients/typescript/src/index.ts';

export interface ScenarioResult {
  runtime: string;
  saved: { content: string; tags: string[] };
  read: boolean;
  listed: number;
  found: boolean;
  foundInBulk: number[];
  batch: { created: number; failed: { index: number; status: number; error: string }[] };
  notFound: ErrorSeen;
  invalid: ErrorSeen;
  unreachable: ErrorSeen;
  webhook: unknown;
  forgedWebhookRefused: boolean;
}

interface ErrorSeen {
  name: string;
  isServiceError: boolean;
  status: number;
  error: string;
  message: string;
}

export interface ScenarioOptions {
  // The client's options: on Node.js none (MEMORY_SERVICE_URL and MEMORY_SERVICE_TOKEN), in a browser given.
  connection: ClientModule.MemoryClientOptions;
  // An address where nothing listens, for the typed error of a network failure.
  unreachableUrl: string;
  runtime: string;
}

export async function clientScenario(client: typeof ClientModule, options: ScenarioOptions): Promise<ScenarioResult> {
  const seen = async (call: Promise<unknown>): Promise<ErrorSeen> => {
    const err = await call.then(
      () => new Error('the call succeeded'),
      (caught: unknown) => caught as Error,
    );
    const typed = err as Partial<ClientModule.MemoryServiceError>;
    return {
      name: err.name,
      isServiceError: err instanceof client.MemoryServiceError,
      status: typed.status ?? -1,
      error: typed.error ?? '',
      message: err.message,
    };
  };
  const memories = new client.MemoryClient(options.connection);
  const marker = `zephyrine${Math.floor(Math.random() * 1e9)}`;
  const saved = await memories.addMemory({ content: `The ${marker} deploy happens on Tuesdays`, tags: ['runtime'], namespace: marker });
  for (let i = 0; i < 4; i++) await memories.addMemory({ content: `note ${i} for ${marker}`, namespace: marker });
  let listed = 0;
  for await (const memory of memories.listMemories({ namespace: marker, limit: 2 })) if (memory.namespace === marker) listed++;
  const hits = await memories.searchMemories({ query: marker, k: 5, namespace: marker });
  const batch = await memories.addMemories([
    { content: `batched ${marker} one`, namespace: marker },
    { content: `batched ${marker} two`, namespace: marker, tags: ['t'.repeat(500)] },
  ]);
  const bulk = await memories.searchMemoriesBulk({ queries: ['batched', 'Tuesdays', 'quokka'], namespace: marker });

  const secret = 'whsec_' + btoa('a webhook secret of enough length');
  const body = JSON.stringify({ type: 'memory.saved', data: { id: saved.id } });
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(timestamp),
    'webhook-signature': new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body),
  };
  let forgedWebhookRefused = false;
  try {
    client.verifyWebhook(secret, body.replace(saved.id, 'another'), headers);
  } catch {
    forgedWebhookRefused = true;
  }
  return {
    runtime: options.runtime,
    saved: { content: saved.content, tags: saved.tags },
    read: (await memories.getMemory(saved.id)).id === saved.id,
    listed,
    found: hits.some((hit) => hit.id === saved.id),
    foundInBulk: bulk.map((result) => result.hits.length),
    batch: { created: batch.created, failed: batch.failed.map(({ index, status, error }) => ({ index, status, error })) },
    notFound: await seen(memories.getMemory('00000000-0000-7000-8000-000000000000')),
    invalid: await seen(memories.addMemory({ content: 'x', namespace: marker, tags: ['t'.repeat(500)] })),
    unreachable: await seen(
      new client.MemoryClient({ ...options.connection, baseUrl: options.unreachableUrl, maxRetries: 1 }).getMemory(saved.id),
    ),
    webhook: client.verifyWebhook(secret, body, headers),
    forgedWebhookRefused,
  };
}
