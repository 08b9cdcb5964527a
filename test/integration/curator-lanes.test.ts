import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultEmbeddings, LlmServer } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// The org's curator embeds a second batch of saved memories while the first is still with the model, so that
// the model never waits for the database (workflows/memory-curator.ts, EMBEDDING_LANES). The provider here holds
// the first request until a second one arrives.
const provider = new LlmServer();
let stack: Stack;
let user: SignedUp;
beforeAll(async () => {
  await provider.start();
  // A provider time limit well above how long the first request is held.
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...provider.embeddingEnv(), EMBEDDING_TIMEOUT_MS: '15000' } });
  user = await signUp(stack.api);
});
afterAll(async () => {
  await stack?.close();
  await provider.close();
});

const save = async (content: string): Promise<void> => {
  const res = await stack.api.post('/api/memories', { token: user.token, body: { content } });
  expect(res.status).toBe(201);
};

describe("the curator's embedding lanes", () => {
  it('sends a second batch to the model while the first is still there, and stores both', async () => {
    let inFlight = 0;
    let most = 0;
    let second!: () => void;
    const secondArrived = new Promise<void>((resolve) => (second = resolve));
    provider.respondEmbeddings(async (call) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      if (inFlight === 2) second();
      // The first request waits for the second (at most 10 s, so that one lane alone fails the test below
      // instead of hanging it).
      if (inFlight === 1) await Promise.race([secondArrived, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      inFlight -= 1;
      return defaultEmbeddings(call);
    });
    await save('The staging database is refreshed from production every Sunday night.');
    await eventually(() => Promise.resolve(inFlight === 1));
    await save('Invoices to German customers need the reverse-charge note.');
    await eventually(async () => (await stack.api.get('/api/memories/embeddings', { token: user.token })).body.embedded === 2, 30_000);
    expect(most).toBe(2);
    // Each went in its own request: the second was saved while the first was with the model.
    const batches = provider.calls.filter((c) => c.embeddings).map((c) => c.embeddings!.input.length);
    expect(batches).toEqual([1, 1]);
  });
});
