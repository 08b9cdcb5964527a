import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curatorWorkflowId } from '../../domain/store/curate.ts';
import { backlogQuery } from '../../workflows/memory-curator.ts';
import { defaultEmbeddings, LlmServer } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// The org's curator embeds a second batch of saved memories while the first is still with the model, so that
// the model never waits for the database (workflows/curator/lanes.ts, the tuning's lanes). The provider here holds
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

  it('takes the newest saves first, so a memory saved behind a backlog is not embedded last', async () => {
    const org = await signUp(stack.api);
    const backlog = async () =>
      (
        await stack.temporal.workflow
          .getHandle(curatorWorkflowId(org.org.id))
          .query(backlogQuery)
          .catch(() => null)
      )?.pending;
    // The provider holds every request until the backlog is in place.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    provider.respondEmbeddings(async (call) => {
      await released;
      return defaultEmbeddings(call);
    });
    const before = provider.calls.length;
    const saveIn = async (content: string) =>
      expect((await stack.api.post('/api/memories', { token: org.token, body: { content } })).status).toBe(201);
    // A backlog of 300 older memories, ten at a time (both lanes take a batch of at most 64 of them and wait in the
    // provider, so at least 172 stay waiting, however the saves and the relay's signals interleave).
    for (let start = 0; start < 300; start += 10)
      await Promise.all(Array.from({ length: 10 }, (_, i) => saveIn(`Older note ${start + i}: the nightly job ${start + i} ran.`)));
    const waiting = await eventually(async () => {
      const [pending, sent] = [await backlog(), provider.calls.slice(before).flatMap((c) => c.embeddings?.input ?? []).length];
      return pending !== undefined && pending + sent === 300 && pending;
    }, 30_000);
    await saveIn('The newest note: the release train leaves on Thursdays.');
    await eventually(async () => (await backlog()) === waiting + 1, 30_000);
    const heldBack = provider.calls.length;
    release();
    await eventually(async () => (await stack.api.get('/api/memories/embeddings', { token: org.token })).body.embedded === 301, 60_000);
    // After the held requests, the newest note goes in the next batch of one lane; the other lane's next batch, of
    // older notes, may go beside it. Oldest first, it went after every older note waiting.
    const afterRelease = provider.calls.slice(heldBack).map((c) => c.embeddings?.input ?? []);
    const newest = afterRelease.findIndex((texts) => texts.some((t) => t.startsWith('The newest note')));
    expect(newest).toBeGreaterThanOrEqual(0);
    expect(afterRelease.slice(0, newest).flat().length).toBeLessThanOrEqual(64);
    expect(waiting).toBeGreaterThan(64 + 64);
  });
});
