// When a run hands over to the next one, what it waits for before that, and what the next run carries.
import { carriedPending } from './batches.ts';
import { busy, type CuratorRun, type CuratorState } from './run.ts';
import { CURATOR_TUNING, type CuratorTuning } from './tuning.ts';

// The workflow's own account of its history (workflowInfo()).
export interface HistorySize {
  continueAsNewSuggested: boolean;
  historyLength: number;
}

// Once its history holds historyEvents events, or sooner when Temporal suggests it.
export const handOverDue = (history: HistorySize, tuning: CuratorTuning): boolean =>
  history.continueAsNewSuggested || history.historyLength >= tuning.historyEvents;

// What the handover waits for, up to handoverGraceMs: the embedding batches, the backfill page and the fold in flight,
// whose completions would otherwise fail the handover. An enrichment is not waited for (its tasks go to the next run).
export const settled = (run: CuratorRun): boolean => run.embeddingNow.size === 0 && !run.paging && !run.foldingNow;

// After draining: a run with nothing left to do and no handover due ends instead of handing over.
export const ends = (run: CuratorRun, history: HistorySize): boolean => !busy(run) && !handOverDue(history, run.tuning);

// The next run's input: the ids waiting and those of the batches in flight (taken first), the backfill where it is,
// the enrichment in flight with its tasks left before those waiting, the totals and reports, and the code's tuning
// (so that re-tuning reaches every org at its next handover).
export function nextRun(run: CuratorRun): CuratorState {
  return {
    orgId: run.orgId,
    pending: carriedPending(run.pending, run.embeddingNow),
    backfill: run.backfill,
    enrichments: run.enrichingNow ? [run.enrichingNow, ...run.enrichments] : run.enrichments,
    totals: run.totals,
    recent: run.recent,
    tuning: CURATOR_TUNING,
  };
}
