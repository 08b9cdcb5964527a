import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { curatorWorkflowId } from '../../domain/store/curate.ts';
import { query, sql } from '../../domain/sql.ts';
import { backlogQuery } from '../../workflows/memory-curator.ts';
import { LlmServer } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';
import { TemporalDevServer } from '../support/temporal-server.ts';

// The org's curator continues as new when Temporal suggests it: after its embedding batches and its fold in flight
// finish, so the next run does not embed them again and no completion arrives while it hands over, or after a short
// grace when one is stuck retrying (here: embedding while the provider is down), and the next run picks that work
// up. A Temporal server of this file's own suggests continue-as-new after a few dozen events instead of thousands.
const provider = new LlmServer();
let dir: string;
let temporal: TemporalDevServer;
let stack: Stack;
let user: SignedUp;

beforeAll(async () => {
  await provider.start();
  dir = await mkdtemp(join(tmpdir(), 'memsvc-curator-can-'));
  temporal = await TemporalDevServer.create(inject('temporalBin'), join(dir, 'temporal.db'), {
    'limit.historyCount.suggestContinueAsNew': 30,
  });
  await temporal.start();
  stack = await startStack({
    env: {
      TEMPORAL_ADDRESS: temporal.address,
      WRITE_RATE_LIMIT_PER_MINUTE: '0',
      ...provider.embeddingEnv(),
      // Slow batches (the second test) are slow, not failed.
      EMBEDDING_TIMEOUT_MS: '10000',
    },
  });
  user = await signUp(stack.api);
});
afterAll(async () => {
  await stack?.close();
  await temporal?.stop();
  await provider.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// Waits until the relay has passed all of the org's outbox rows to Temporal.
const signalled = (orgId: string) =>
  eventually(async () => {
    const [row] = await query(
      stack.orm.em.fork(),
      sql<{ n: number }>`select count(*)::int as n from outbox where org_id = ${orgId} and dispatched_at is null`,
    );
    return row!.n === 0;
  });

describe("the org's curator", () => {
  it('continues as new without waiting long for a batch stuck in retries, and the next run embeds it', async () => {
    provider.down('embeddings', true);
    const save = async (content: string) => {
      const res = await stack.api.post('/api/memories', { token: user.token, body: { content } });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const first = await save('The first memory, whose batch is in flight when the run ends.');
    await eventually(() => Promise.resolve(provider.calls.some((c) => c.embeddings)));
    const handle = stack.temporal.workflow.getHandle(curatorWorkflowId(user.org.id));
    const firstRun = (await handle.describe()).runId;

    // Each save is a signal of its own (the relay drains at most every 250 ms), a few events of history each.
    const ids = [first];
    for (let i = 0; i < 12 && (await handle.describe()).runId === firstRun; i++) {
      ids.push(await save(`Memory number ${i} saved while the provider is down.`));
      // Signalled before the next save is made: each save a signal of its own.
      await signalled(user.org.id);
    }
    // A new run, while the provider is still down: the old one waited for its batch only briefly.
    await eventually(async () => (await handle.describe()).runId !== firstRun, 40_000);
    expect((await handle.query(backlogQuery)).backfilling).toBe(false);

    // Nothing but the carried state can bring the first memory's id to the new run (no backfill runs).
    provider.down('embeddings', false);
    await eventually(
      async () => (await stack.api.get('/api/memories/embeddings', { token: user.token })).body.embedded === ids.length,
      60_000,
    );
    const found = await stack.api.post('/api/memories/search', {
      token: user.token,
      body: { query: 'first memory in flight', mode: 'semantic', k: ids.length },
    });
    expect(found.body.hits.map((h: { id: string }) => h.id)).toContain(first);
  });

  it('lets its embedding batches finish before it continues as new, so no memory is embedded twice', async () => {
    const owner = await signUp(stack.api);
    // Each batch takes a while, so a handover finds one in flight.
    provider.slow('embeddings', 3_000);
    const handle = stack.temporal.workflow.getHandle(curatorWorkflowId(owner.org.id));
    const texts: string[] = [];
    let firstRun: string | undefined;
    for (let i = 0; i < 12; i++) {
      const content = `Handover memory ${i}: the curator embeds this text once.`;
      const res = await stack.api.post('/api/memories', { token: owner.token, body: { content } });
      expect(res.status).toBe(201);
      texts.push(content);
      await signalled(owner.org.id);
      const run = (await handle.describe()).runId;
      firstRun ??= run;
      if (run !== firstRun) break;
    }
    await eventually(
      async () => (await stack.api.get('/api/memories/embeddings', { token: owner.token })).body.embedded === texts.length,
      60_000,
    );
    provider.slow('embeddings', 0);
    expect((await handle.describe()).runId).not.toBe(firstRun);
    const sent = provider.calls.flatMap((c) => c.embeddings?.input ?? []);
    for (const text of texts)
      expect(
        sent.filter((t) => t === text),
        text,
      ).toHaveLength(1);
  }, 120_000);

  it('lets its fold in flight finish before it continues as new, so no completion fails the handover', async () => {
    const owner = await signUp(stack.api);
    const handle = stack.temporal.workflow.getHandle(curatorWorkflowId(owner.org.id));
    const save = async (i: number) => {
      const res = await stack.api.post('/api/memories', { token: owner.token, body: { content: `Fold handover memory ${i}.` } });
      expect(res.status).toBe(201);
      await signalled(owner.org.id);
    };
    // A transaction holds the org's index state, as a fold does, so the curator's first fold waits in flight.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => (locked = resolve));
    const holder = stack.orm.em.fork().transactional(async (tx) => {
      await query(tx, sql`insert into lexical_state (org_id) values (${owner.org.id}) on conflict do nothing`);
      await query(tx, sql`select 1 from lexical_state where org_id = ${owner.org.id} for update`);
      locked();
      await released;
    });
    await holding;
    let firstRun = '';
    try {
      await save(0);
      const db = stack.orm.em.fork();
      await eventually(
        async () =>
          (
            await query(
              db,
              sql<{
                n: number;
              }>`select count(*)::int as n from pg_stat_activity
                where datname = current_database() and wait_event_type = 'Lock' and query like '%lexical_state%'`,
            )
          )[0]!.n > 0,
      );
      firstRun = (await handle.describe()).runId;
      // Saves (each a signal and an embedding batch) until Temporal suggests a handover (30 events).
      for (let i = 1; i <= 12; i++) {
        await save(i);
        const { runId, historyLength } = await handle.describe();
        if (runId !== firstRun || historyLength >= 40) break;
      }
      // The run wants to hand over, and waits for the fold the lock holds.
      expect((await handle.describe()).historyLength).toBeGreaterThanOrEqual(30);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect((await handle.describe()).runId).toBe(firstRun);
    } finally {
      release();
      await holder;
    }
    await eventually(async () => (await handle.describe()).runId !== firstRun);

    // The first run saw every fold it started complete, and no workflow task of its failed.
    const events = (await stack.temporal.workflow.getHandle(curatorWorkflowId(owner.org.id), firstRun).fetchHistory()).events ?? [];
    const folds = events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'foldPostings')
      .map((e) => Number(e.eventId));
    const completed = new Set(
      events.flatMap((e) =>
        e.activityTaskCompletedEventAttributes ? [Number(e.activityTaskCompletedEventAttributes.scheduledEventId)] : [],
      ),
    );
    expect(folds.length).toBeGreaterThan(0);
    for (const fold of folds) expect(completed.has(fold), `fold scheduled at event ${fold}`).toBe(true);
    expect(events.some((e) => e.workflowTaskFailedEventAttributes)).toBe(false);
    expect(events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
  }, 120_000);
});
