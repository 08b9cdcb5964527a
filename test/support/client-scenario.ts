// What the TypeScript client's users do with it, run unchanged in the runtimes it promises: Node.js 20 (its
// built package) and a real browser (bundled). It receives the client module rather than importing it,
// so each runtime hands it the build under test. Returns what it saw, for the test to check.
import { Webhook } from 'standardwebhooks';
import type * as ClientModule from '../../clients/typescript/src/index.ts';

export interface ScenarioResult {
  runtime: string;
  saved: { content: string; tags: string[] };
  read: boolean;
  listed: number;
  found: boolean;
  notFound: { name: string; status: number; error: string };
  webhook: unknown;
  forgedWebhookRefused: boolean;
}

export async function clientScenario(client: typeof ClientModule, options: { baseUrl: string; token: string; runtime: string }): Promise<ScenarioResult> {
  const memories = new client.MemoryClient({ baseUrl: options.baseUrl, token: options.token });
  const marker = `zephyrine${Math.floor(Math.random() * 1e9)}`;
  const saved = await memories.addMemory({ content: `The ${marker} deploy happens on Tuesdays`, tags: ['runtime'], namespace: marker });
  for (let i = 0; i < 4; i++) await memories.addMemory({ content: `note ${i} for ${marker}`, namespace: marker });
  let listed = 0;
  for await (const memory of memories.listMemories({ namespace: marker, limit: 2 })) if (memory.namespace === marker) listed++;
  const hits = await memories.searchMemories({ query: marker, k: 5, namespace: marker });
  const missing = (await memories.getMemory('00000000-0000-7000-8000-000000000000').then(
    () => new Error('a memory that does not exist was found'),
    (err: unknown) => err,
  )) as ClientModule.MemoryServiceError;

  const secret = 'whsec_' + btoa('a webhook secret of enough length');
  const body = JSON.stringify({ type: 'memory.saved', data: { id: saved.id } });
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body) };
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
    notFound: { name: missing.name, status: missing.status, error: missing.error },
    webhook: client.verifyWebhook(secret, body, headers),
    forgedWebhookRefused,
  };
}
