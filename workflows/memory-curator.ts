import { ActivityFailure, allHandlersFinished, condition, continueAsNew, defineQuery, defineSignal, patched, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { CurateRequest } from '../domain/embeddings/curate.ts';
import type { EmbedOutcome } from '../domain/embeddings/store.ts';
import type { EnrichmentArgs } from '../domain/enrichment/schedule.ts';
import { EMBEDDING_BATCH, LLM_CALL, POSTINGS_FOLD, TRANSACTION } from './options.ts';

const { embedMemories, embedPage } = proxyActivities<Activities>(EMBEDDING_BATCH);
const { enrichMemory } = proxyActivities<Activities>(LLM_CALL);
const { releaseLlmKeys } = proxyActivities<Activities>(TRANSACTION);
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
}
export const backlogQuery = defineQuery<CuratorBacklog>('backlog');

export interface CuratorState {
  orgId: string;
  pending?: string[];
  backfill?: { cursor: string | null } | null;
  enrichments?: EnrichmentArgs[];
  totals?: CuratorTotals;
  recent?: EnrichmentReport[];
}

// Memories embedded per activity: a model call of this many texts keeps both cores busy.
export const CURATOR_BATCH = 64;
// Batches of saved memories embedded at once: while one batch's vectors are written, the next is in the model
// (the worker's model takes an org's passes in arrival order), so the model does not wait for the database.
const EMBEDDING_LANES = 2;
// Ids kept in the workflow's state at most; past that the list is dropped for a backfill scan, which finds the
// same memories in the database, so a long outage of the model cannot grow the history without bound.
export const CURATOR_MAX_PENDING = 5_000;
// Enrichments kept waiting at most (each is a few hundred bytes of state); more are dropped and counted.
export const CURATOR_MAX_ENRICHMENTS = 1_000;
// The org's model calls are spaced at least this far apart: a burst of saves becomes a steady stream of
// calls rather than a burst of provider 429s.
export const LLM_PACE_MS = 200;
// A burst of saves: ids arriving faster than this over the last BURST_WINDOW_MS, or twice as fast in the latest
// signal (for BURST_ONSET_MS after it). The model cannot keep up with a burst anyway (it embeds 50-70 memories/s on
// two cores), and embedding at full speed beside the API takes the CPU the saves need (on the 2-core benchmark
// machine: 495 saves/s instead of 830). So during a burst the curator embeds one batch per BURST_PAUSE_MS and
// catches up when the burst ends; at a steady 50 saves/s it keeps up (docs/performance.md).
// The latest signal's rate sees a burst at its onset: by the two seconds' rate alone, a burst of 800 saves/s, whose
// first signals held 2 and then 82 ids 0.33 s later, had started both lanes' batches (3 s of the model's CPU) before
// it was seen. The pause comes before a batch, and looks again every BURST_LOOK_AGAIN_MS (the window and one relay
// interval), so that the memories of a burst that has ended wait that long, not the whole pause.
export const BURST_PER_SECOND = 100;
const BURST_WINDOW_MS = 2_000;
const BURST_ONSET_MS = 500;
// The outbox relay's signals to a curator come at least this far apart (temporal/outbox-relay.ts, drainSpacingMs).
const RELAY_INTERVAL_MS = 250;
const BURST_PAUSE_MS = 15_000;
const BURST_LOOK_AGAIN_MS = 2_500;
const RECENT_REPORTS = 50;
// Saved postings are folded into blocks at most this often: each fold then takes a few seconds of saves at once.
const FOLD_INTERVAL = '2 seconds';
// An org with nothing to do for this long lets its curator end; the next signal starts a new run.
const IDLE = '1 hour';
// A run continues as new once its history holds this many events, before Temporal suggests it (at about 4,100 on
// the dev server). A signal that arrives while the run hands over (about one handover in ten under a stream of
// saves) fails the handover, and the worker then replays the whole history before it tries again, with the org's
// signals refused meanwhile: about 3 s a replay of 4,100 events under 50 saves/s on the 2-core benchmark machine,
// and 7 s without embedding in the handover traced (it failed twice). Each handover also idles a lane while the
// other finishes its batch, so handing over much more often costs throughput instead (docs/performance.md,
// session 16).
export const CURATOR_HISTORY_EVENTS = 2_000;
// Before it hands over, a run lets its embedding batches and its fold finish for at most this long: the next run would
// embed the same memories again beside them, and their completions would fail the handover. A batch stuck in retries
// (the provider is down) is left behind instead, and redone by the next run.
const HANDOVER_GRACE = '10 seconds';

// The org's actor for continuous background work (`memory-curator-<org id>`). Signals carry the ids of saved
// and edited memories, which it embeds in batches, and the enrichments some of them asked for, which it runs
// one model call at a time. The two run side by side, so a slow or failing provider never holds up
// embedding. Beside them it folds the org's newly saved postings into blocks (domain/search/fold.ts), the one
// folder of the org. Its state travels through continue-as-new before the history grows large.
export async function memoryCuratorWorkflow(state: CuratorState): Promise<CuratorTotals> {
  const { orgId } = state;
  const pending = new Set(state.pending ?? []);
  let backfill = state.backfill ?? null;
  const enrichments = [...(state.enrichments ?? [])];
  // Totals carried from a run before `refused` was counted lack it, hence the defaults under the spread.
  const totals: CuratorTotals = { embedded: 0, reused: 0, current: 0, refused: 0, enriched: 0, enrichSkipped: 0, enrichFailed: 0, enrichDropped: 0, ...state.totals };
  const recent = [...(state.recent ?? [])];
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
  // When ids arrived lately (workflow time) and how many: the burst detector's window.
  const arrivals: { at: number; count: number }[] = [];
  // Runs started before a burst was seen at its onset, and the pause came before the batch, replay without them.
  const burstOnset = patched('burst-onset');
  // The latest signal's ids a second since the signal before it (over the whole window when it came first, and at
  // least a relay interval apart), while it is recent. A relay that signals late brings more ids after a longer
  // interval, so its rate stays that of the saves.
  const onsetRate = () => {
    const last = arrivals.at(-1);
    if (!last || last.at < Date.now() - BURST_ONSET_MS) return 0;
    const interval = Math.max(RELAY_INTERVAL_MS, last.at - (arrivals.at(-2)?.at ?? last.at - BURST_WINDOW_MS));
    return (last.count * 1000) / interval;
  };
  const bursting = () => {
    while (arrivals.length > 0 && arrivals[0]!.at < Date.now() - BURST_WINDOW_MS) arrivals.shift();
    return arrivals.reduce((sum, a) => sum + a.count, 0) > (BURST_PER_SECOND * BURST_WINDOW_MS) / 1000 || (burstOnset && onsetRate() > 2 * BURST_PER_SECOND);
  };

  setHandler(curateSignal, (request) => {
    if (request.ids.length > 0) arrivals.push({ at: Date.now(), count: request.ids.length });
    unfolded = true;
    for (const id of request.ids) pending.add(id);
    if (request.backfill || pending.size > CURATOR_MAX_PENDING) {
      pending.clear();
      backfill = { cursor: null };
    }
    for (const args of request.enrich ?? []) {
      if (enrichments.length < CURATOR_MAX_ENRICHMENTS) enrichments.push(args);
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
  }));

  // Runs started before folding existed replay without it.
  const folds = patched('fold-postings');
  const busy = () => pending.size > 0 || backfill !== null || enrichments.length > 0 || inFlight > 0 || (folds && unfolded);
  // Runs `work` whenever `ready`, one unit at a time, until the run drains.
  const loop = async (ready: () => boolean, work: () => Promise<void>) => {
    for (;;) {
      await condition(() => ready() || draining);
      if (draining) return;
      inFlight += 1;
      try {
        await work();
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
  // The newest saves first: a memory saved while the org's backlog is embedded (after an import, say) is found by
  // meaning at once, not after the whole backlog; the backlog takes as long either way (docs/performance.md, session
  // 33). Runs started before replay taking the oldest first.
  const newestFirst = patched('newest-first');
  const embedBatch = async () => {
    const ids = newestFirst ? [...pending].slice(-CURATOR_BATCH).reverse() : [...pending].slice(0, CURATOR_BATCH);
    for (const id of ids) pending.delete(id);
    embeddingNow.add(ids);
    count(await embedMemories({ orgId, ids }));
    embeddingNow.delete(ids);
  };
  // Runs started before a second lane existed replay with one.
  const lanes = patched('embedding-lanes') ? EMBEDDING_LANES : 1;
  const embedding = loop(
    () => pending.size > 0 || backfill !== null,
    async () => {
      if (burstOnset && bursting()) {
        for (let waited = 0; waited < BURST_PAUSE_MS && bursting() && !draining; waited += BURST_LOOK_AGAIN_MS) await sleep(BURST_LOOK_AGAIN_MS);
        // A run that began handing over meanwhile leaves the batch to the next run.
        if (draining) return;
      }
      if (pending.size > 0) {
        await embedBatch();
      } else if (backfill) {
        const walking = backfill;
        paging = true;
        const page = await embedPage({ orgId, cursor: walking.cursor }).finally(() => (paging = false));
        count(page.outcome);
        // A backfill requested again meanwhile starts over; otherwise this one moves on.
        if (backfill === walking) backfill = page.next ? { cursor: page.next } : null;
      }
      if (!burstOnset && bursting()) await sleep(BURST_PAUSE_MS);
    },
  );
  // The other lanes take saved memories only (a backfill walks its pages in order), and none during a burst.
  const moreLanes = Array.from({ length: lanes - 1 }, () => loop(() => pending.size > 0 && !bursting(), embedBatch));
  const enriching = loop(
    () => enrichments.length > 0,
    async () => {
      const report = await enrich(enrichments.shift()!, (rest) => (enrichingNow = rest));
      recent.push(report);
      if (recent.length > RECENT_REPORTS) recent.shift();
      totals.enriched += report.stored.length;
      totals.enrichSkipped += report.skipped.length;
      totals.enrichFailed += report.failed.length;
    },
  );

  const folding = folds
    ? loop(
        () => unfolded,
        async () => {
          unfolded = false;
          foldingNow = true;
          const outcome = await foldPostings({ orgId }).finally(() => (foldingNow = false));
          if (outcome.more) unfolded = true;
          else await sleep(FOLD_INTERVAL);
        },
      )
    : null;

  // Runs started before the history bound and the handover grace replay without them.
  const bounded = patched('bounded-history');
  const handOver = () => workflowInfo().continueAsNewSuggested || (bounded && workflowInfo().historyLength >= CURATOR_HISTORY_EVENTS);
  // Idle for an hour: end. History long enough: carry the state over to a new run.
  for (;;) {
    const worked = await condition(busy, IDLE);
    if (worked) await condition(() => !busy() || handOver());
    if (!worked || handOver()) break;
  }
  // No unit starts from here on. The embedding batches and the fold in flight get a short grace (HANDOVER_GRACE): a
  // completion that arrives while the run hands over fails the handover, and the worker then replays the whole
  // history (1.4 s at 2,000 events beside a stream of saves, when a fold's completion did so in session 28; the saves
  // waited 1.5 s longer for their vectors for the rest of that stream). Any other unit in flight is not waited for:
  // an activity retrying through a provider's outage could hold the run for an hour while its history grows. Its
  // work goes to the next run, which redoes it; every kind of unit is idempotent (a current vector is kept, an
  // enrichment is written only while the content is unchanged, a fold takes what is staged), and a carried
  // enrichment keeps its escrowed keys until the next run releases them.
  draining = true;
  void embedding;
  void moreLanes;
  void enriching;
  void folding;
  // Runs that handed over before the fold was waited for replay without it.
  const foldWaited = bounded && patched('handover-waits-for-fold');
  if (bounded) await condition(() => embeddingNow.size === 0 && !paging && !(foldWaited && foldingNow), HANDOVER_GRACE);
  await condition(allHandlersFinished);
  if (!busy() && !handOver()) return totals;
  return continueAsNew<typeof memoryCuratorWorkflow>({
    orgId,
    // The batches still in flight are taken again first: at the end when the newest go first, else at the start.
    pending: [...new Set(newestFirst ? [...pending, ...[...embeddingNow].flat()] : [...[...embeddingNow].flat(), ...pending])],
    backfill,
    enrichments: enrichingNow ? [enrichingNow, ...enrichments] : enrichments,
    totals,
    recent,
  });
}

// One memory's enrichment: each task on its own, so one that fails (a refused key, a malformed answer, retries
// exhausted) neither blocks the others nor touches the memory; the caller's sealed keys, if any, are destroyed
// however it ends.
// `inFlight` is told which tasks are left before each one, and null when the enrichment ends.
async function enrich(args: EnrichmentArgs, inFlight: (rest: EnrichmentArgs | null) => void): Promise<EnrichmentReport> {
  const report: EnrichmentReport = { memoryId: args.memoryId, stored: [], skipped: [], failed: [] };
  try {
    for (const [i, task] of args.tasks.entries()) {
      inFlight({ ...args, tasks: args.tasks.slice(i) });
      try {
        const outcome = await enrichMemory({ orgId: args.orgId, memoryId: args.memoryId, task, contentHash: args.contentHash, escrowId: args.escrowId });
        report[outcome].push(task);
      } catch (err) {
        report.failed.push({ task, error: err instanceof ActivityFailure && err.cause ? err.cause.message : String(err) });
      }
      inFlight({ ...args, tasks: args.tasks.slice(i + 1) });
      await sleep(LLM_PACE_MS);
    }
  } finally {
    inFlight(null);
    if (args.escrowId) await releaseLlmKeys({ orgId: args.orgId, escrowId: args.escrowId });
  }
  return report;
}
