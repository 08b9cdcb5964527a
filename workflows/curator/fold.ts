// The fold loop's decisions. A fold is due after each signal (saves and edits signal) and at the start of a run; one
// that stopped with more staged goes on at once, otherwise the loop waits foldIntervalMs before the next.
import type { CuratorRun } from './run.ts';

export const foldReady = (run: CuratorRun): boolean => run.unfolded;

// A fold starts: it takes whatever is staged, so a signal from now on makes another fold due.
export function foldStarts(run: CuratorRun): void {
  run.unfolded = false;
  run.foldingNow = true;
}

// A fold ended with `more` staged or not: whether the loop waits foldIntervalMs before the next fold.
export function foldPauses(run: CuratorRun, more: boolean): boolean {
  if (more) run.unfolded = true;
  return !more;
}
