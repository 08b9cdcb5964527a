import { activityInfo } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Activities } from '../../activities/index.ts';
import type { EmbedOutcome } from '../../domain/embeddings/store.ts';
import { curatorWorkflowId, type CurateRequest, type EnrichmentArgs } from '../../domain/store/curate.ts';
import { loadConfig } from '../../infra/config.ts';
import { dataConverter } from '../../temporal/data-converter.ts';
import { CURATOR_TUNING, type CuratorTuning } from '../../workflows/curator/tuning.ts';
import { curateSignal, type CuratorState, type memoryCuratorWorkflow } from '../../workflows/memory-curator.ts';
import { REPLAY_CODEC_KEYS } from '../support/histories.ts';

// The curator's timers, in workflow time, on Temporal's time-skipping test server (scripts/lib.sh,
// ensure_temporal_test_server): an hour of idleness, the pace of model calls, a burst's pause and the handover's
// grace pass in moments. The activities are stand-ins that record what the workflow asked for: what they do is
// tested against the real stack elsewhere (curator-*.test.ts); here only the orchestration's timing is.
const converter = dataConverter(loadConfig({ TEMPORAL_CODEC_KEYS: REPLAY_CODEC_KEYS, SERVICE_MODE: 'local' }).codecKeys);
let env: TestWorkflowEnvironment;

beforeAll(async () => {
  const path = process.env.TEMPORAL_TEST_SERVER_BIN;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER_BIN is set by scripts/test.sh (ensure_temporal_test_server)');
  env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path } },
    client: { dataConverter: converter },
  });
});
afterAll(async () => {
  await env?.teardown();
});

interface Call {
  activity: string;
  runId: string;
  input: Record<string, unknown>;
}

// Stand-in activities: each call is recorded with its run; `hold` keeps a call unfinished until released.
function standIns(hold: (activity: string, runId: string) => boolean = () => false) {
  const calls: Call[] = [];
  const held: (() => void)[] = [];
  const record = async (activity: string, input: Record<string, unknown>) => {
    const runId = activityInfo().workflowExecution?.runId ?? '';
    calls.push({ activity, runId, input });
    if (hold(activity, runId)) await new Promise<void>((resolve) => held.push(resolve));
  };
  const activities: Partial<Activities> = {
    async embedMemories(input): Promise<EmbedOutcome> {
      await record('embedMemories', input);
      return { embedded: input.ids.length, reused: 0, current: 0, refused: 0 };
    },
    async embedPage(input) {
      await record('embedPage', input);
      return { outcome: { embedded: 0, reused: 0, current: 0, refused: 0 }, next: null };
    },
    async foldPostings(input) {
      await record('foldPostings', input);
      return { folded: 0, compacted: 0, more: false };
    },
    async enrichMemory(input) {
      await record('enrichMemory', input as unknown as Record<string, unknown>);
      return 'stored';
    },
    async releaseLlmKeys(input) {
      await record('releaseLlmKeys', input);
    },
  };
  return { calls, activities, release: () => held.splice(0).forEach((resolve) => resolve()) };
}

// A curator's handle, and the id of its first run.
type Curator = WorkflowHandle<typeof memoryCuratorWorkflow> & { firstRun: string };

// Runs the curator of a new org with a worker of the stand-ins until `drive` returns.
async function withCurator<T>(
  activities: Partial<Activities>,
  state: Omit<CuratorState, 'orgId'>,
  first: CurateRequest | null,
  drive: (curator: Curator) => Promise<T>,
): Promise<T> {
  const taskQueue = `curator-timers-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
    dataConverter: converter,
    // The bundle's tracing interceptors export spans through this sink; these runs trace nothing.
    sinks: { exporter: { export: { fn: () => undefined } } },
  });
  const orgId = randomUUID();
  const options = { taskQueue, workflowId: curatorWorkflowId(orgId), args: [{ orgId, ...state }] as [CuratorState] };
  return worker.runUntil(async () => {
    const curator: Curator = first
      ? await env.client.workflow
          .signalWithStart<typeof memoryCuratorWorkflow, [CurateRequest]>('memoryCuratorWorkflow', {
            ...options,
            signal: curateSignal,
            signalArgs: [first],
          })
          .then((handle) => Object.assign(handle, { firstRun: handle.signaledRunId }))
      : await env.client.workflow
          .start<typeof memoryCuratorWorkflow>('memoryCuratorWorkflow', options)
          .then((handle) => Object.assign(handle, { firstRun: handle.firstExecutionRunId }));
    return drive(curator);
  });
}

const tuned = (values: Partial<CuratorTuning>): CuratorTuning => ({ ...CURATOR_TUNING, ...values });
const ids = (n: number) => Array.from({ length: n }, () => randomUUID());
const request = (over: Partial<CurateRequest>): CurateRequest => ({ ids: [], backfill: false, enrich: [], ...over });

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const eventMs = (e: HistoryEvent): number => Number(e.eventTime!.seconds!.toString()) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);

async function historyOf(curator: Curator, runId: string): Promise<HistoryEvent[]> {
  const history = await env.client.workflow.getHandle(curator.workflowId, runId).fetchHistory();
  return history.events ?? [];
}

// Workflow times at which the run scheduled each call of `activity`.
const scheduledAt = (events: HistoryEvent[], activity: string): number[] =>
  events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity).map(eventMs);

describe('the curator in workflow time', () => {
  it('ends a run once its org has had nothing to do for idleMs', async () => {
    const { activities } = standIns();
    const events = await withCurator(activities, {}, null, async (curator) => {
      await curator.result();
      return historyOf(curator, curator.firstRun);
    });
    const idle = eventMs(events.at(-1)!) - eventMs(events[0]!);
    expect(events.at(-1)!.workflowExecutionCompletedEventAttributes).toBeTruthy();
    expect(idle).toBeGreaterThanOrEqual(CURATOR_TUNING.idleMs);
    expect(idle).toBeLessThan(CURATOR_TUNING.idleMs + 60_000);
  });

  it("spaces an org's model calls llmPaceMs apart, and releases the caller's keys after the last", async () => {
    const { calls, activities } = standIns();
    const enrichment: EnrichmentArgs = {
      orgId: 'org',
      memoryId: randomUUID(),
      tasks: ['synopsis', 'entities', 'facts'],
      contentHash: 'h',
      escrowId: randomUUID(),
    };
    const paceMs = 30_000;
    const events = await withCurator(
      activities,
      { tuning: tuned({ llmPaceMs: paceMs }) },
      request({ enrich: [enrichment] }),
      async (curator) => {
        const totals = await curator.result();
        expect(totals.enriched).toBe(3);
        return historyOf(curator, curator.firstRun);
      },
    );
    const at = scheduledAt(events, 'enrichMemory');
    expect(at).toHaveLength(3);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(paceMs);
    expect(calls.map((c) => c.activity).filter((a) => a !== 'foldPostings')).toEqual([
      'enrichMemory',
      'enrichMemory',
      'enrichMemory',
      'releaseLlmKeys',
    ]);
  });

  it('holds a burst back until it has passed (looking again every burstLookAgainMs), and a steady trickle not at all', async () => {
    const burst = { burstPerSecond: 10, burstWindowMs: 30_000, burstLookAgainMs: 10_000, burstPauseMs: 120_000 };
    const firstEmbedding = async (n: number) => {
      const { activities } = standIns();
      return withCurator(activities, { tuning: tuned(burst) }, request({ ids: ids(n) }), async (curator) => {
        const totals = await curator.result();
        expect(totals.embedded).toBe(n);
        const events = await historyOf(curator, curator.firstRun);
        return Math.min(...scheduledAt(events, 'embedMemories')) - eventMs(events[0]!);
      });
    };
    // 400 ids at once is more than the window allows (10 a second over 30 s): no lane embeds until the window has
    // passed, and the first lane sees that at its next look.
    const afterBurst = await firstEmbedding(400);
    expect(afterBurst).toBeGreaterThan(burst.burstWindowMs);
    expect(afterBurst).toBeLessThanOrEqual(burst.burstWindowMs + burst.burstLookAgainMs + 1_000);
    expect(await firstEmbedding(4)).toBeLessThan(1_000);
  });

  // While an activity runs, the test server's clock does not skip: these two tests run in real time, with a short
  // grace, and end the next run once it has shown what it took over.
  it("hands over after waiting handoverGraceMs for an embedding in flight, and the next run embeds that batch's ids", async () => {
    const graceMs = 3_000;
    let firstRun = '';
    const { calls, activities, release } = standIns((activity, runId) => activity === 'embedMemories' && runId === firstRun);
    const stuck = ids(4);
    const later = ids(10);
    const laterRuns = () =>
      calls.filter((c) => c.activity === 'embedMemories' && c.runId !== firstRun).flatMap((c) => c.input.ids as string[]);
    const state = { tuning: tuned({ batch: 4, lanes: 1, historyEvents: 30, handoverGraceMs: graceMs }) };
    const first = await withCurator(activities, state, request({ ids: stuck }), async (curator) => {
      firstRun = curator.firstRun;
      await expect.poll(() => calls.some((c) => c.activity === 'embedMemories'), { timeout: 10_000 }).toBe(true);
      for (const id of later) await curator.signal(curateSignal, request({ ids: [id] }));
      await expect.poll(() => new Set(laterRuns()), { timeout: 20_000 }).toEqual(new Set([...stuck, ...later]));
      release();
      await curator.terminate('the test has seen what the next run took over');
      return historyOf(curator, firstRun);
    });
    const handedOver = first.at(-1)!;
    expect(handedOver.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
    const waited = eventMs(handedOver) - Math.max(...first.filter((e) => e.workflowExecutionSignaledEventAttributes).map(eventMs));
    expect(waited).toBeGreaterThanOrEqual(graceMs);
    // Not until the stuck activity's own timeout (EMBEDDING_BATCH, two minutes) failed it.
    expect(waited).toBeLessThan(120_000);
  });

  it('hands over at once with a model call in flight, and the next run takes up that enrichment where it stopped', async () => {
    let firstRun = '';
    const { calls, activities, release } = standIns((activity, runId) => activity === 'enrichMemory' && runId === firstRun);
    const enrichment: EnrichmentArgs = {
      orgId: 'o',
      memoryId: randomUUID(),
      tasks: ['synopsis', 'facts'],
      contentHash: 'h',
      escrowId: null,
    };
    const tasksLater = () => calls.filter((c) => c.activity === 'enrichMemory' && c.runId !== firstRun).map((c) => c.input.task);
    const state = { tuning: tuned({ historyEvents: 30, handoverGraceMs: 20_000 }) };
    const first = await withCurator(activities, state, request({ enrich: [enrichment] }), async (curator) => {
      firstRun = curator.firstRun;
      await expect.poll(() => calls.some((c) => c.activity === 'enrichMemory'), { timeout: 10_000 }).toBe(true);
      for (const id of ids(10)) await curator.signal(curateSignal, request({ ids: [id] }));
      await expect.poll(tasksLater, { timeout: 20_000 }).toEqual(['synopsis', 'facts']);
      release();
      await curator.terminate('the test has seen what the next run took over');
      return historyOf(curator, firstRun);
    });
    const handedOver = first.at(-1)!;
    expect(handedOver.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
    const lastSignal = Math.max(...first.filter((e) => e.workflowExecutionSignaledEventAttributes).map(eventMs));
    // The fold between signals may take its interval; the model call in flight is not waited for.
    expect(eventMs(handedOver) - lastSignal).toBeLessThan(CURATOR_TUNING.foldIntervalMs + 1_000);
  });
});
