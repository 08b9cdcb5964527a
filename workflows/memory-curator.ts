import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { CurateRequest, EnrichmentArgs } from '../domain/store/curate.ts';
import { emptyReport, reported, tasksLeft } from './curator/enrichment.ts';
import { foldPauses, foldReady, foldStarts } from './curator/fold.ts';
import { ends, handOverDue, nextRun, settled } from './curator/handover.ts';
import { backfillAfter, batchDone, batchStarts, firstLaneReady, firstLaneTakes, holdsBack, otherLaneReady } from './curator/lanes.ts';
import {
  backlogOf,
  busy,
  counted,
  received,
  startRun,
  unitFailed,
  type Backfill,
  type CuratorBacklog,
  type CuratorState,
  type CuratorTotals,
  type EnrichmentReport,
} from './curator/run.ts';
import { BOOKKEEPING, EMBEDDING_BATCH, LLM_CALL, POSTINGS_FOLD } from './options.ts';

export type { CuratorBacklog, CuratorState, CuratorTotals, EnrichmentReport } from './curator/run.ts';

const { embedMemories, embedPage } = proxyActivities<Activities>(EMBEDDING_BATCH);
const { enrichMemory } = proxyActivities<Activities>(LLM_CALL);
const { releaseLlmKeys } = proxyActivities<Activities>(BOOKKEEPING);
const { foldPostings } = proxyActivities<Activities>(POSTINGS_FOLD);

// A run recorded before the burst detector's third sign (workflows/curator/burst.ts) replays without it: the sign
// changes when the lanes take batches. To be deprecated once no such run is open.
const BURST_SINCE_FIRST = 'curator-burst-rate-since-first';

export const curateSignal = defineSignal<[CurateRequest]>('curate');
export const backlogQuery = defineQuery<CuratorBacklog>('backlog');

// The org's actor for continuous background work (`memory-curator-<org id>`). Signals carry the ids of saved
// and edited memories, which it embeds in batches, and the enrichments some of them asked for, which it runs
// one model call at a time. The two run side by side, so a slow or failing provider never holds up
// embedding. Beside them it folds the org's newly saved postings into blocks (domain/search/fold.ts), the one
// folder of the org. Its state travels through continue-as-new before the history grows large.
// Each loop's decisions are plain functions in workflows/curator/; this function wires them to timers and activities.
// Keep its awaits as they are: the loops' commands within a workflow task go out in the order their awaits resolve.
export async function memoryCuratorWorkflow(state: CuratorState): Promise<CuratorTotals> {
  const run = startRun(state, patched(BURST_SINCE_FIRST));
  const { orgId, tuning } = run;

  setHandler(curateSignal, (request) => received(run, request, Date.now()));
  setHandler(backlogQuery, () => backlogOf(run));

  // Runs `work` whenever `ready`, one unit at a time, until the run drains. A unit that fails for good (its
  // activity's retries spent, or refused) is counted and the loop goes on after a pause: nothing awaits the loops,
  // so a rejection would fail every workflow task of the run, on every replay, and wedge the org's curator.
  const loop = async (unit: string, ready: () => boolean, work: () => Promise<void>) => {
    for (;;) {
      await condition(() => ready() || run.draining);
      if (run.draining) return;
      run.inFlight += 1;
      try {
        await work();
      } catch (err) {
        const failure = unitFailed(run, unit, failureMessage(err));
        log.warn('a curator unit failed for good; the loop goes on', { orgId, unit, error: failure });
        await sleep(tuning.failurePauseMs);
      } finally {
        run.inFlight -= 1;
      }
    }
  };

  const embedBatch = async () => {
    const ids = batchStarts(run);
    try {
      counted(run.totals, await embedMemories({ orgId, ids }));
    } finally {
      batchDone(run, ids);
    }
  };
  const embedBackfillPage = async (walking: Backfill) => {
    run.paging = true;
    const page = await embedPage({ orgId, cursor: walking.cursor }).finally(() => (run.paging = false));
    counted(run.totals, page.outcome);
    run.backfill = backfillAfter(run.backfill, walking, page.next);
  };
  // The first lane waits before its unit during a burst, looking again every burstLookAgainMs (lanes.ts, holdsBack).
  loop(
    'embedding',
    () => firstLaneReady(run),
    async () => {
      for (let waited = 0; holdsBack(run, waited, Date.now()); waited += tuning.burstLookAgainMs) await sleep(tuning.burstLookAgainMs);
      const unit = firstLaneTakes(run);
      if (unit?.kind === 'batch') await embedBatch();
      else if (unit?.kind === 'page') await embedBackfillPage(unit.walking);
    },
  );
  for (let lane = 1; lane < tuning.lanes; lane++) loop('embedding', () => otherLaneReady(run, Date.now()), embedBatch);
  loop(
    'enrichment',
    () => run.enrichments.length > 0,
    async () => reported(run, await enrich(run.enrichments.shift()!, tuning.llmPaceMs, (rest) => (run.enrichingNow = rest))),
  );
  loop(
    'fold',
    () => foldReady(run),
    async () => {
      foldStarts(run);
      const outcome = await foldPostings({ orgId }).finally(() => (run.foldingNow = false));
      if (foldPauses(run, outcome.more)) await sleep(tuning.foldIntervalMs);
    },
  );

  const handOver = () => handOverDue(workflowInfo(), tuning);
  // Idle for idleMs: end. History long enough: carry the state over to a new run.
  for (;;) {
    const worked = await condition(() => busy(run), tuning.idleMs);
    if (worked) await condition(() => !busy(run) || handOver());
    if (!worked || handOver()) break;
  }
  // No unit starts from here on. The embedding batches and the fold in flight get a short grace (handoverGraceMs): a
  // completion that arrives while the run hands over fails the handover, and the worker then replays the whole
  // history. Any other unit in flight is not waited for: an activity retrying through a provider's outage could hold
  // the run for an hour while its history grows. Its work goes to the next run, which redoes it; every kind of unit is
  // idempotent (a current vector is kept, an enrichment is written only while the content is unchanged, a fold takes
  // what is staged), and a carried enrichment keeps its escrowed keys until the next run releases them.
  run.draining = true;
  await condition(() => settled(run), tuning.handoverGraceMs);
  await condition(allHandlersFinished);
  if (ends(run, workflowInfo())) return run.totals;
  return continueAsNew<typeof memoryCuratorWorkflow>(nextRun(run));
}

const failureMessage = (err: unknown): string => (err instanceof ActivityFailure && err.cause ? err.cause.message : String(err));

// One memory's enrichment: each task on its own, so one that fails (a refused key, a malformed answer, retries
// exhausted) neither blocks the others nor touches the memory; the caller's sealed keys, if any, are destroyed
// however it ends.
// `inFlight` is told which tasks are left before each one, and null when the enrichment ends.
async function enrich(args: EnrichmentArgs, paceMs: number, inFlight: (rest: EnrichmentArgs | null) => void): Promise<EnrichmentReport> {
  const report = emptyReport(args);
  try {
    for (const [i, task] of args.tasks.entries()) {
      inFlight(tasksLeft(args, i));
      try {
        const outcome = await enrichMemory({
          orgId: args.orgId,
          memoryId: args.memoryId,
          task,
          contentHash: args.contentHash,
          escrowId: args.escrowId,
        });
        report[outcome].push(task);
      } catch (err) {
        report.failed.push({ task, error: failureMessage(err) });
      }
      inFlight(tasksLeft(args, i + 1));
      await sleep(paceMs);
    }
  } finally {
    inFlight(null);
    if (args.escrowId) await releaseLlmKeys({ orgId: args.orgId, escrowId: args.escrowId });
  }
  return report;
}
