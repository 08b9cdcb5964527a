// One curator run's state and what a signal, the backlog query and a failed unit do to it: plain functions, so
// that the workflow (workflows/memory-curator.ts) only wires them to Temporal's timers, conditions and activities.
import type { EmbedOutcome } from '../../domain/embeddings/store.ts';
import type { CurateRequest, EnrichmentArgs } from '../../domain/store/curate.ts';
import { BurstDetector } from './burst.ts';
import { CURATOR_TUNING, type CuratorTuning } from './tuning.ts';

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

// A run's input: what the run before it carried over, or the org alone for a first run.
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

// A backfill scan under way: the cursor of the page it takes next (null: from the start).
export interface Backfill {
  cursor: string | null;
}

// A run's state: what it carries over (the ids, the backfill, the enrichments, the totals, the reports) and what it
// only holds while it runs.
export interface CuratorRun {
  readonly orgId: string;
  readonly tuning: CuratorTuning;
  readonly pending: Set<string>;
  backfill: Backfill | null;
  readonly enrichments: EnrichmentArgs[];
  readonly totals: CuratorTotals;
  readonly recent: EnrichmentReport[];
  lastFailure: string | null;
  // Whether postings may be waiting to be folded: at the start of a run, and after each signal (saves and edits
  // signal; so does the worker's start for an org with postings staged, see scheduleFolds).
  unfolded: boolean;
  // Units running in any loop; a run is busy while one is.
  inFlight: number;
  // Set once the run hands over: no unit starts from then on.
  draining: boolean;
  // The units in flight: the batches of ids being embedded (one per lane), whether a backfill page is (the first
  // lane's, one at a time; the backfill keeps its cursor until the page is done), whether a fold is, and the
  // enrichment being run with its tasks not yet done.
  readonly embeddingNow: Set<string[]>;
  paging: boolean;
  foldingNow: boolean;
  enrichingNow: EnrichmentArgs | null;
  readonly bursts: BurstDetector;
}

// `burstSinceFirst`: whether the burst detector reads its third sign (burst.ts), which runs recorded before it do not.
export function startRun(state: CuratorState, burstSinceFirst = true): CuratorRun {
  const tuning = state.tuning ?? CURATOR_TUNING;
  return {
    orgId: state.orgId,
    tuning,
    pending: new Set(state.pending ?? []),
    backfill: state.backfill ?? null,
    enrichments: [...(state.enrichments ?? [])],
    // Totals carried from an earlier run may lack the counters added since, hence the defaults under the spread.
    totals: {
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
    },
    recent: [...(state.recent ?? [])],
    lastFailure: null,
    unfolded: true,
    inFlight: 0,
    draining: false,
    embeddingNow: new Set(),
    paging: false,
    foldingNow: false,
    enrichingNow: null,
    bursts: new BurstDetector(tuning, burstSinceFirst),
  };
}

// A curate signal at workflow time `now`. Too many ids waiting are dropped for a backfill scan, which finds the same
// memories in the database; enrichments past the queue's bound are dropped and counted.
export function received(run: CuratorRun, request: CurateRequest, now: number): void {
  run.bursts.arrived(now, request.ids.length);
  run.unfolded = true;
  for (const id of request.ids) run.pending.add(id);
  if (request.backfill || run.pending.size > run.tuning.maxPending) {
    run.pending.clear();
    run.backfill = { cursor: null };
  }
  for (const args of request.enrich ?? []) {
    if (run.enrichments.length < run.tuning.maxEnrichments) run.enrichments.push(args);
    else run.totals.enrichDropped += 1;
  }
}

// The backlog query's answer: copies, so that the answer does not change under the caller.
export function backlogOf(run: CuratorRun): CuratorBacklog {
  return {
    pending: run.pending.size,
    backfilling: run.backfill !== null,
    backfillCursor: run.backfill?.cursor ?? null,
    enrichments: run.enrichments.length,
    totals: { ...run.totals },
    recent: [...run.recent],
    lastFailure: run.lastFailure,
  };
}

// Whether the run has anything to do or under way; an idle run ends.
export const busy = (run: CuratorRun): boolean =>
  run.pending.size > 0 || run.backfill !== null || run.enrichments.length > 0 || run.inFlight > 0 || run.unfolded;

// A unit that failed for good: counted and shown by the backlog query. Returns the failure as shown.
export function unitFailed(run: CuratorRun, unit: string, message: string): string {
  run.totals.unitFailures += 1;
  run.lastFailure = `${unit}: ${message}`;
  return run.lastFailure;
}

// Adds an embedding activity's outcome to the totals.
export function counted(totals: CuratorTotals, outcome: EmbedOutcome): void {
  totals.embedded += outcome.embedded;
  totals.reused += outcome.reused;
  totals.current += outcome.current;
  totals.refused += outcome.refused;
}
