import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURATE_JOB, type CurateRequest } from '../../domain/store/curate.ts';
import { query, sql } from '../../domain/sql.ts';
import { SIGNAL_JOBS } from '../../temporal/jobs.ts';
import { signalWithStart } from '../../temporal/start.ts';
import { defaultEmbeddings, LlmServer } from '../support/llm-server.ts';
import { eventually, newRelay, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// During a burst of saves the org's curator leaves the model alone until the burst is over, so that the model does
// not take the CPU the saves need; then it embeds every memory of the burst (workflows/curator/burst.ts and
// lanes.ts). The stack has no relay of its own: the saves wait in the outbox, and one relay started after
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

const save = async (owner: SignedUp, content: string): Promise<string> => {
  const res = await stack.api.post('/api/memories', { token: owner.token, body: { content } });
  expect(res.status).toBe(201);
  return res.body.id;
};

// What the relay sends the org's curator for these saved memories.
const signalCurator = (orgId: string, ids: string[]): Promise<void> => {
  const job = SIGNAL_JOBS[CURATE_JOB]!;
  const request: CurateRequest = { ids, backfill: false, enrich: [] };
  return signalWithStart(stack.temporal, stack.config.TEMPORAL_TASK_QUEUE, job.workflow, job.signal, [request], {
    workflowId: job.workflowId(orgId),
    orgId,
    description: job.description,
    args: [job.initial(orgId)],
  });
};

describe("the curator's burst of saves", () => {
  it('embeds nothing while the burst lasts, then every memory of it', async () => {
    const calls: number[] = [];
    provider.respondEmbeddings((call) => {
      calls.push(Date.now());
      return defaultEmbeddings(call);
    });
    // More ids than the 200 of two seconds that make a burst, saved 30 at a time.
    for (let start = 0; start < BURST; start += 30) {
      await Promise.all(
        Array.from({ length: 30 }, (_, i) => save(user, `Burst note ${start + i}: the build cache lives on volume ${start + i}.`)),
      );
    }
    const relay = newRelay(stack, { batchSize: 1_000 });
    const delivered = Date.now();
    await relay.start();
    try {
      await eventually(
        async () => (await stack.api.get('/api/memories/embeddings', { token: user.token })).body.embedded === BURST,
        60_000,
      );
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

  it("sees a burst at its onset, by the rate of its latest signal, before two seconds' worth of saves", async () => {
    const org = await signUp(stack.api);
    const orgId = org.org.id;
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(await save(org, `Onset note ${i}: the nightly job writes to bucket ${i}.`));
    // The stack has no relay: these saves' own outbox rows stay where they are.
    await query(stack.orm.em.fork(), sql`delete from outbox where org_id = ${orgId}`);
    const calls: { at: number; texts: number }[] = [];
    provider.respondEmbeddings((call) => {
      calls.push({ at: Date.now(), texts: call.embeddings!.input.length });
      return defaultEmbeddings(call);
    });
    // A burst's first two signals: the first commit's 2 saves, then 98 at once (at least 392 a second, the relay's
    // signals being at least a quarter of a second apart). A rate over a window would not see them: 100 ids are not
    // more than 100 a second over two seconds, nor 200 a second over half a second.
    await signalCurator(orgId, ids.slice(0, 2));
    const second = Date.now();
    await signalCurator(orgId, ids.slice(2));
    await eventually(async () => (await stack.api.get('/api/memories/embeddings', { token: org.token })).body.embedded === 100, 60_000);
    // Nothing but the first signal's 2 went to the model before the burst's pause of 2.5 s.
    const early = calls.filter((c) => c.at < second + 2_000);
    expect(early.reduce((sum, c) => sum + c.texts, 0)).toBeLessThanOrEqual(2);
    expect(calls.reduce((sum, c) => sum + c.texts, 0)).toBe(100);
  });
});
