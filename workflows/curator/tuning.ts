// The curator's tuning. A run reads it from its input and hands the code's current values to the next run, so a
// change here reaches every org at its next handover and never alters a run in flight (which would need a patch).
export interface CuratorTuning {
  // Memories embedded per activity: a model call of this many texts keeps both cores busy.
  batch: number;
  // Batches of saved memories embedded at once: while one batch's vectors are written, the next is in the model.
  lanes: number;
  // Ids kept in the workflow's state at most; past that the list is dropped for a backfill scan, which finds the
  // same memories in the database, so a long outage of the model cannot grow the history without bound.
  maxPending: number;
  // Enrichments kept waiting at most (each is a few hundred bytes of state); more are dropped and counted.
  maxEnrichments: number;
  // The org's model calls are spaced at least this far apart: a burst of saves becomes a steady stream of calls.
  llmPaceMs: number;
  // A burst of saves (workflows/curator/burst.ts): ids arriving faster than burstPerSecond over burstWindowMs, or
  // twice as fast in the latest signal (for burstOnsetMs after it; signals come at least relayIntervalMs apart).
  burstPerSecond: number;
  burstWindowMs: number;
  burstOnsetMs: number;
  relayIntervalMs: number;
  // During a burst, a batch waits up to burstPauseMs, looking again every burstLookAgainMs.
  burstPauseMs: number;
  burstLookAgainMs: number;
  // Enrichment outcomes kept for the backlog query.
  recentReports: number;
  // Saved postings are folded into blocks at most this often.
  foldIntervalMs: number;
  // An org with nothing to do for this long lets its curator end; the next signal starts a new run.
  idleMs: number;
  // A run hands over once its history holds this many events (or when Temporal suggests it sooner).
  historyEvents: number;
  // Before it hands over, a run lets its embedding batches and its fold finish for at most this long.
  handoverGraceMs: number;
  // After a unit fails for good, its loop waits this long before the next unit.
  failurePauseMs: number;
}

// Why each value: docs/architecture.md, "Actors: each org's curator".
export const CURATOR_TUNING: CuratorTuning = {
  batch: 64,
  lanes: 2,
  maxPending: 5_000,
  maxEnrichments: 1_000,
  llmPaceMs: 200,
  burstPerSecond: 100,
  burstWindowMs: 2_000,
  burstOnsetMs: 500,
  relayIntervalMs: 250,
  burstPauseMs: 15_000,
  burstLookAgainMs: 2_500,
  recentReports: 50,
  foldIntervalMs: 2_000,
  idleMs: 60 * 60 * 1000,
  historyEvents: 2_000,
  handoverGraceMs: 10_000,
  failurePauseMs: 10_000,
};
