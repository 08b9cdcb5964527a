import { ActivityFailure, continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { PageCursor } from '../domain/exports/exports.ts';
import { BOOKKEEPING, TRANSACTION } from './options.ts';

const { exportPage } = proxyActivities<Activities>(TRANSACTION);
// Recording the outcome is retried until it succeeds, so a database outage longer than a page's retries ends the
// export as failed, with its reason, instead of leaving it pending.
const { finishExport } = proxyActivities<Activities>(BOOKKEEPING);

// Pages through the rows one activity (one transaction, one chunk) at a time; a fresh run every 200 pages
// keeps the history short for very large exports. A page that keeps failing fails the export with its reason.
const PAGES_PER_RUN = 200;

export async function exportWorkflow(args: { exportId: string; cursor?: PageCursor }): Promise<string> {
  let cursor: PageCursor | null = args.cursor ?? { seq: 0, afterCreatedAt: null, afterId: null };
  try {
    for (let pages = 0; cursor && pages < PAGES_PER_RUN; pages++) cursor = await exportPage({ exportId: args.exportId, cursor });
  } catch (err) {
    const reason = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    await finishExport({ exportId: args.exportId, error: reason });
    return 'failed';
  }
  if (cursor) return continueAsNew<typeof exportWorkflow>({ exportId: args.exportId, cursor });
  await finishExport({ exportId: args.exportId, error: null });
  return 'completed';
}
