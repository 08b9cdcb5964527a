import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { CurateRequest, EnrichmentArgs } from '../domain/store/curate.ts';
import type { EmbedOutcome } from '../domain/embeddings/store.ts';
import { carriedPending, takeNewest } from './curator/batches.ts';
import { BurstDetector } from './curator/burst.ts';
import { CURATOR_TUNING, type CuratorTuning } from './curator/tuning.ts';
import { BOOKKEEPING, EMBEDDING_BATCH, LLM_CALL, POSTINGS_FOLD } from './options.ts';

const { embedMemories, embedPage } = proxyActivities<Activities>(EMBEDDING_BATCH);
const { enrichMemory } = proxyActivities<Activities>(LLM_CALL);
const { releaseLlmKeys } = proxyActivities<Activities>(BOOKKEEPING);
const { foldPostings } = proxyActivities<Activities>(POSTINGS_FOLD);

export const curateSignal = defineSignal<[CurateRequest]>('curate');

// What became of one memory's enrichment.
export interface EnrichmentReport {
  memoryId: string;
  stored: string[];
  skipped: string[];
  failed: { task: string; error: string }[];
}

export interface CuratorTotals extends EmbedOutcome {
  // Enrichment tasks stored, skipped (the memory changed or went) and failed, and enrichments dropped
  // because the queue was full.
  enriched: number;
  enrichSkipped: number;
  enrichFailed: number;
  enrichDropped: number;
  // Units (a batch, a page, an enrichment, a fold) that failed for good; the loop that ran each went on.
  unitFailures: number;
}

export interface CuratorBacklog {
  // Memories signalled and not yet embedded, and whether a backfill scan is under way (and where it is).
  pending: number;
  backfilling: boolean;
  backfillCursor: string | null;
  // Memories waiting for their LLM enrichment.
  enrichments: number;
  totals: CuratorTotals;
  // The latest enrichments' outcomes, newest last.
  recent: EnrichmentReport[];
  // The latest unit that failed for good in this run, and why.
  lastFailure: string | null;
}
export const backlogQuery = defineQuery<CuratorBacklog>('backlog');

export interface CuratorState {
  orgId: string;
  pending?: string[];
  backfill?: { cursor: string | null } | null;
  enrichments?: EnrichmentArgs[];
  totals?: CuratorTotals;
  recent?: EnrichmentReport[];
  // Absent in a first run and in runs handed over before the tuning travelled: the code's own.
  tuning?: CuratorTuning;
}

// The org's actor for continuous background work (`memory-curator-<org id>`). Signals carry the ids of saved
// and edited memories, which it embeds in batches, and the enrichments some of them asked for, which it runs
// one model call at a time. The two run side by side, so a slow or failing provider never holds up
// embedding. Beside them it folds the org's newly saved postings into blocks (domain/search/fold.ts), the one
// folder of the org. Its state travels through continue-as-new before the history grows large.
export async function memoryCuratorWorkflow(state: CuratorState): Promise<CuratorTotals> {
  const { orgId } = state;
  const tuning = state.tuning ?? CURATOR_TUNING;
  const pending = new Set(state.pending ?? []);
  let backfill = state.backfill ?? null;
  const enrichments = [...(state.enrichments ?? [])];
  // Totals carried from an earlier run may lack the counters added since, hence the defaults under the spread.
  const totals: CuratorTotals = {
    embedded: 0,
    reused: 0,
    current: 0,
    refused: 0,
    enriched: 0,
    enrichSkipped: 0,
    enrichFailed: 0,
    enrichDropped: 0,
    unitFailures: 0,
    ...state.totals,
  };
  const recent = [...(state.recent ?? [])];
  let lastFailure: string | null = null;
  // Whether postings may be waiting to be folded: at the start of a run, and after each signal (saves and edits
  // signal; so does the worker's start for an org with postings staged, see scheduleFolds).
  let unfolded = true;
  let inFlight = 0;
  let draining = false;
  // The units in flight: the batches of ids being embedded (one per lane), whether a backfill page is (the first
  // lane's, one at a time; the backfill keeps its cursor until the page is done), and the enrichment being run
  // with its tasks not yet done.
  const embeddingNow = new Set<string[]>();
  let paging = false;
  let foldingNow = false;
  let enrichingNow: EnrichmentArgs | null = null;
  const bursts = new BurstDetector(tuning);
  const bursting = () => bursts.bursting(Date.now());

  setHandler(curateSignal, (request) => {
    bursts.arrived(Date.now(), request.ids.length);
    unfolded = true;
    for (const id of request.ids) pending.add(id);
    if (request.backfill || pending.size > tuning.maxPending) {
      pending.clear();
      backfill = { cursor: null };
    }
    for (const args of request.enrich ?? []) {
      if (enrichments.length < tuning.maxEnrichments) enrichments.push(args);
      else totals.enrichDropped += 1;
    }
  });
  setHandler(backlogQuery, () => ({
    pending: pending.size,
    backfilling: backfill !== null,
    backfillCursor: backfill?.cursor ?? null,
    enrichments: enrichments.length,
    totals: { ...totals },
    recent: [...recent],
    lastFailure,
  }));

  const busy = () => pending.size > 0 || backfill !== null || enrichments.length > 0 || inFlight > 0 || unfolded;
  // Runs `work` whenever `ready`, one unit at a time, until the run drains. A unit that fails for good (its
  // activity's retries spent, or refused) is counted and the loop goes on after a pause: nothing awaits the loops,
  // so a rejection would fail every workflow task of the run, on every replay, and wedge the org's curator.
  const loop = async (unit: string, ready: () => boolean, work: () => Promise<void>) => {
    for (;;) {
      await condition(() => ready() || draining);
      if (draining) return;
      inFlight += 1;
      try {
        await work();
      } catch (err) {
        totals.unitFailures += 1;
        lastFailure = `${unit}: ${failureMessage(err)}`;
        log.warn('a curator unit failed for good; the loop goes on', { orgId, unit, error: lastFailure });
        await sleep(tuning.failurePauseMs);
      } finally {
        inFlight -= 1;
      }
    }
  };

  const count = (o: EmbedOutcome) => {
    totals.embedded += o.embedded;
    totals.reused += o.reused;
    totals.current += o.current;
    totals.refused += o.refused;
  };
  const embedBatch = async () => {
    const ids = takeNewest(pending, tuning.batch);
    embeddingNow.add(ids);
    try {
      count(await embedMemories({ orgId, ids }));
    } finally {
      embeddingNow.delete(ids);
    }
  };
  const embedBackfillPage = async (walking: { cursor: string | null }) => {
    paging = true;
    const page = await embedPage({ orgId, cursor: walking.cursor }).finally(() => (paging = false));
    count(page.outcome);
    // A backfill requested again meanwhile starts over; otherwise this one moves on.
    if (backfill === walking) backfill = page.next ? { cursor: page.next } : null;
  };
  // The first lane takes saved memories and the backfill's pages (in order). During a burst a batch waits, looking
  // again every burstLookAgainMs, so that the memories of a burst that has ended wait that long, not the whole pause.
  loop(
    'embedding',
    () => pending.size > 0 || backfill !== null,
    async () => {
      for (let waited = 0; waited < tuning.burstPauseMs && bursting() && !draining; waited += tuning.burstLookAgainMs)
        await sleep(tuning.burstLookAgainMs);
      // A run that began handing over meanwhile leaves the batch to the next run.
      if (draining) return;
      if (pending.size > 0) await embedBatch();
      else if (backfill) await embedBackfillPage(backfill);
    },
  );
  // The other lanes take saved memories only, and none during a burst.
  for (let lane = 1; lane < tuning.lanes; lane++) loop('embedding', () => pending.size > 0 && !bursting(), embedBatch);
  loop(
    'enrichment',
    () => enrichments.length > 0,
    async () => {
      const report = await enrich(enrichments.shift()!, tuning.llmPaceMs, (rest) => (enrichingNow = rest));
      recent.push(report);
      if (recent.length > tuning.recentReports) recent.shift();
      totals.enriched += report.stored.length;
      totals.enrichSkipped += report.skipped.length;
      totals.enrichFailed += report.failed.length;
    },
  );
  loop(
    'fold',
    () => unfolded,
    async () => {
      unfolded = false;
      foldingNow = true;
      const outcome = await foldPostings({ orgId }).finally(() => (foldingNow = false));
      if (outcome.more) unfolded = true;
      else await sleep(tuning.foldIntervalMs);
    },
  );

  const handOver = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= tuning.historyEvents;
  // Idle for idleMs: end. History long enough: carry the state over to a new run.
  for (;;) {
    const worked = await condition(busy, tuning.idleMs);
    if (worked) await condition(() => !busy() || handOver());
    if (!worked || handOver()) break;
  }
  // No unit starts from here on. The embedding batches and the fold in flight get a short grace (handoverGraceMs): a
  // completion that arrives while the run hands over fails the handover, and the worker then replays the whole
  // history. Any other unit in flight is not waited for: an activity retrying through a provider's outage could hold
  // the run for an hour while its history grows. Its work goes to the next run, which redoes it; every kind of unit is
  // idempotent (a current vector is kept, an enrichment is written only while the content is unchanged, a fold takes
  // what is staged), and a carried enrichment keeps its escrowed keys until the next run releases them.
  draining = true;
  await condition(() => embeddingNow.size === 0 && !paging && !foldingNow, tuning.handoverGraceMs);
  await condition(allHandlersFinished);
  if (!busy() && !handOver()) return totals;
  return continueAsNew<typeof memoryCuratorWorkflow>({
    orgId,
    pending: carriedPending(pending, embeddingNow),
    backfill,
    enrichments: enrichingNow ? [enrichingNow, ...enrichments] : enrichments,
    totals,
    recent,
    tuning: CURATOR_TUNING,
  });
}

const failureMessage = (err: unknown): string => (err instanceof ActivityFailure && err.cause ? err.cause.message : String(err));

// One memory's enrichment: each task on its own, so one that fails (a refused key, a malformed answer, retries
// exhausted) neither blocks the others nor touches the memory; the caller's sealed keys, if any, are destroyed
// however it ends.
// `inFlight` is told which tasks are left before each one, and null when the enrichment ends.
async function enrich(args: EnrichmentArgs, paceMs: number, inFlight: (rest: EnrichmentArgs | null) => void): Promise<EnrichmentReport> {
  const report: EnrichmentReport = { memoryId: args.memoryId, stored: [], skipped: [], failed: [] };
  try {
    for (const [i, task] of args.tasks.entries()) {
      inFlight({ ...args, tasks: args.tasks.slice(i) });
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
      inFlight({ ...args, tasks: args.tasks.slice(i + 1) });
      await sleep(paceMs);
    }
  } finally {
    inFlight(null);
    if (args.escrowId) await releaseLlmKeys({ orgId: args.orgId, escrowId: args.escrowId });
  }
  return report;
}
