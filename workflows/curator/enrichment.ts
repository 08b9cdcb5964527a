// The enrichment loop's bookkeeping: one memory's report, what is left of its enrichment as each task starts (the
// next run redoes that much if the run hands over meanwhile), and the totals and recent reports it adds to.
import type { EnrichmentArgs } from '../../domain/store/curate.ts';
import type { CuratorRun, EnrichmentReport } from './run.ts';

export const emptyReport = (args: EnrichmentArgs): EnrichmentReport => ({ memoryId: args.memoryId, stored: [], skipped: [], failed: [] });

// The enrichment with its tasks from index `from` on: those not yet done.
export const tasksLeft = (args: EnrichmentArgs, from: number): EnrichmentArgs => ({ ...args, tasks: args.tasks.slice(from) });

// A finished enrichment: kept among the recentReports latest, and counted.
export function reported(run: CuratorRun, report: EnrichmentReport): void {
  run.recent.push(report);
  if (run.recent.length > run.tuning.recentReports) run.recent.shift();
  run.totals.enriched += report.stored.length;
  run.totals.enrichSkipped += report.skipped.length;
  run.totals.enrichFailed += report.failed.length;
}
