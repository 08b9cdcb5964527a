import { ActivityFailure, allHandlersFinished, condition, continueAsNew, defineQuery, defineSignal, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { CurateRequest } from '../domain/embeddings/curate.ts';
import type { EmbedOutcome } from '../domain/embeddings/store.ts';
import type { EnrichmentArgs } from '../domain/enrichment/schedule.ts';
import { EMBEDDING_BATCH, LLM_CALL, TRANSACTION } from './options.ts';

const { embedMemories, embedPage } = proxyActivities<Activities>(EMBEDDING_BATCH);
const { enrichMemory } = proxyActivities<Activities>(LLM_CALL);
const { releaseLlmKeys } = proxyActivities<Activities>(TRANSACTION);

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
// Ids kept in the workflow's state at most; past that the list is dropped for a backfill scan, which finds the
// same memories in the database, so a long outage of the model cannot grow the history without bound.
export const CURATOR_MAX_PENDING = 5_000;
// Enrichments kept waiting at most (each is a few hundred bytes of state); more are dropped and counted.
export const CURATOR_MAX_ENRICHMENTS = 1_000;
// The org's model calls are spaced at least this far apart: a burst of saves becomes a steady stream of
// calls rather than a burst of provider 429s.
export const LLM_PACE_MS = 200;
const RECENT_REPORTS = 50;
// An org with nothing to do for this long lets its curator end; the next signal starts a new run.
const IDLE = '1 hour';

// The org's actor for continuous background work (`memory-curator-<org id>`). Signals carry the ids of saved
// and edited memories, which it embeds in batches, and the enrichments some of them asked for, which it runs
// one model call at a time. The two run side by side, so a slow or failing provider never holds up
// embedding. Its state travels through continue-as-new before the history grows large.
export async function memoryCuratorWorkflow(state: CuratorState): Promise<CuratorTotals> {
  const { orgId } = state;
  const pending = new Set(state.pending ?? []);
  let backfill = state.backfill ?? null;
  const enrichments = [...(state.enrichments ?? [])];
  const totals: CuratorTotals = state.totals ?? { embedded: 0, reused: 0, current: 0, enriched: 0, enrichSkipped: 0, enrichFailed: 0, enrichDropped: 0 };
  const recent = [...(state.recent ?? [])];
  let inFlight = 0;
  let draining = false;

  setHandler(curateSignal, (request) => {
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

  const busy = () => pending.size > 0 || backfill !== null || enrichments.length > 0 || inFlight > 0;
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
  };
  const embedding = loop(
    () => pending.size > 0 || backfill !== null,
    async () => {
      if (pending.size > 0) {
        const ids = [...pending].slice(0, CURATOR_BATCH);
        for (const id of ids) pending.delete(id);
        count(await embedMemories({ orgId, ids }));
      } else if (backfill) {
        const walking = backfill;
        const page = await embedPage({ orgId, cursor: walking.cursor });
        count(page.outcome);
        // A backfill requested again meanwhile starts over; otherwise this one moves on.
        if (backfill === walking) backfill = page.next ? { cursor: page.next } : null;
      }
    },
  );
  const enriching = loop(
    () => enrichments.length > 0,
    async () => {
      const report = await enrich(enrichments.shift()!);
      recent.push(report);
      if (recent.length > RECENT_REPORTS) recent.shift();
      totals.enriched += report.stored.length;
      totals.enrichSkipped += report.skipped.length;
      totals.enrichFailed += report.failed.length;
    },
  );

  // Idle for an hour: end. Asked to continue as new: let the current units finish, then carry the state over.
  for (;;) {
    const worked = await condition(busy, IDLE);
    if (worked) await condition(() => !busy() || workflowInfo().continueAsNewSuggested);
    if (!worked || workflowInfo().continueAsNewSuggested) break;
  }
  draining = true;
  await Promise.all([embedding, enriching]);
  await condition(allHandlersFinished);
  if (!busy() && !workflowInfo().continueAsNewSuggested) return totals;
  return continueAsNew<typeof memoryCuratorWorkflow>({ orgId, pending: [...pending], backfill, enrichments, totals, recent });
}

// One memory's enrichment: each task on its own, so one that fails (a refused key, a malformed answer, retries
// exhausted) neither blocks the others nor touches the memory; the caller's sealed keys, if any, are destroyed
// however it ends.
async function enrich(args: EnrichmentArgs): Promise<EnrichmentReport> {
  const report: EnrichmentReport = { memoryId: args.memoryId, stored: [], skipped: [], failed: [] };
  try {
    for (const task of args.tasks) {
      try {
        const outcome = await enrichMemory({ orgId: args.orgId, memoryId: args.memoryId, task, contentHash: args.contentHash, escrowId: args.escrowId });
        report[outcome].push(task);
      } catch (err) {
        report.failed.push({ task, error: err instanceof ActivityFailure && err.cause ? err.cause.message : String(err) });
      }
      await sleep(LLM_PACE_MS);
    }
  } finally {
    if (args.escrowId) await releaseLlmKeys({ escrowId: args.escrowId });
  }
  return report;
}
