// The embedding lanes' decisions: when a lane takes a unit, which one, and how long the first lane waits during a
// burst. The first lane takes saved memories and the backfill's pages (in order); the other lanes take saved
// memories only, and none during a burst (workflows/curator/burst.ts).
import { takeNewest } from './batches.ts';
import type { Backfill, CuratorRun } from './run.ts';

export const firstLaneReady = (run: CuratorRun): boolean => run.pending.size > 0 || run.backfill !== null;

export const otherLaneReady = (run: CuratorRun, now: number): boolean => run.pending.size > 0 && !run.bursts.bursting(now);

// Whether the first lane, having waited `waited` ms for its unit, waits another burstLookAgainMs: during a burst, up
// to burstPauseMs, so that the memories of a burst that has ended wait one look, not the whole pause; never once
// the run hands over.
export const holdsBack = (run: CuratorRun, waited: number, now: number): boolean =>
  waited < run.tuning.burstPauseMs && run.bursts.bursting(now) && !run.draining;

export type FirstLaneUnit = { kind: 'batch' } | { kind: 'page'; walking: Backfill } | null;

// What the first lane takes once it has waited: saved memories before the backfill's next page, and nothing once the
// run began handing over (the next run takes it).
export function firstLaneTakes(run: CuratorRun): FirstLaneUnit {
  if (run.draining) return null;
  if (run.pending.size > 0) return { kind: 'batch' };
  if (run.backfill) return { kind: 'page', walking: run.backfill };
  return null;
}

// A batch a lane starts: the newest ids waiting, held as in flight until batchDone.
export function batchStarts(run: CuratorRun): string[] {
  const ids = takeNewest(run.pending, run.tuning.batch);
  run.embeddingNow.add(ids);
  return ids;
}

export function batchDone(run: CuratorRun, ids: string[]): void {
  run.embeddingNow.delete(ids);
}

// The backfill after the page `walking` was at: a backfill requested again meanwhile starts over; otherwise this one
// moves on to `next`, or ends.
export const backfillAfter = (current: Backfill | null, walking: Backfill, next: string | null): Backfill | null =>
  current === walking ? (next ? { cursor: next } : null) : current;
