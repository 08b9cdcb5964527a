import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultEmbeddings, LlmServer } from '../support/llm-server.ts';
import { eventually, newRelay, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// During a burst of saves the org's curator leaves the model alone until the burst is over, so that the model does
// not take the CPU the saves need; then it embeds every memory of the burst (workflows/memory-curator.ts,
// BURST_PER_SECOND). The stack has no relay of its own: the saves wait in the outbox, and one relay started after
// them claims them all in one drain and delivers them as one signal, a burst however slowly the machine saved them.
const provider = new LlmServer();
let stack: Stack;
let user: SignedUp;
beforeAll(async () => {
  await provider.start();
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...provider.embeddingEnv() } });
  user = await signUp(stack.api);
});
afterAll(async () => {
  await stack?.close();
  await provider.close();
});

const BURST = 300;

describe("the curator's burst of saves", () => {
  it('embeds nothing while the burst lasts, then every memory of it', async () => {
    const calls: number[] = [];
    provider.respondEmbeddings((call) => {
      calls.push(Date.now());
      return defaultEmbeddings(call);
    });
    // More ids than the 200 of two seconds that make a burst, saved 30 at a time.
    for (let start = 0; start < BURST; start += 30) {
      const saves = Array.from({ length: 30 }, (_, i) => stack.api.post('/api/memories', { token: user.token, body: { content: `Burst note ${start + i}: the build cache lives on volume ${start + i}.` } }));
      for (const res of await Promise.all(saves)) expect(res.status).toBe(201);
    }
    const relay = newRelay(stack, { batchSize: 1_000 });
    const delivered = Date.now();
    await relay.start();
    try {
      await eventually(async () => (await stack.api.get('/api/memories/embeddings', { token: user.token })).body.embedded === BURST, 60_000);
    } finally {
      await relay.stop();
    }
    // The first batch waited for the burst's window (two seconds) to pass without new saves; it did not start at
    // the first signal.
    expect(calls.length).toBeGreaterThan(0);
    expect(calls[0]! - delivered).toBeGreaterThanOrEqual(2_000);
    // And every text went to the provider once.
    const texts = provider.calls.flatMap((c) => c.embeddings?.input ?? []);
    expect(texts).toHaveLength(BURST);
  });
});
