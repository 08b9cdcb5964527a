import type { MikroORM } from '@mikro-orm/postgresql';
import { setTimeout as sleep } from 'node:timers/promises';
import { exportPage, finishExport, type PageCursor } from '../domain/exports/exports.ts';
import type { OrgActivity } from '../domain/org-activity.ts';
import type { OrgActivityBoard } from '../domain/org-activity-board.ts';
import { asActivity } from './failures.ts';

// Well within a page's deadline (workflows/options.ts, TRANSACTION).
const PAUSE_MAX_MS = 5_000;

export interface ExportActivityDeps {
  orm: MikroORM;
  // The orgs with an activity under way in this worker (temporal/worker.ts counts them), those busy in the API, and
  // the share of the time an org's export may take while another org's work is under way (ORG_BUSY_SHARE).
  orgActivity: OrgActivity;
  orgBoard: OrgActivityBoard;
  busyShare: number;
  // How the pause is waited out (tests record it).
  pause?: (ms: number) => Promise<unknown>;
}

export function exportActivities({ orm, orgActivity, orgBoard, busyShare, pause = sleep }: ExportActivityDeps) {
  const othersActive = async (orgId: string) => orgActivity.othersActive(orgId) || (await orgBoard.othersActive(orgId));
  return {
    // While another org's work is under way, in this worker (its saves being embedded) or in the API (its searches),
    // a page is followed by a pause that holds the export to its share of the time: an export is a background job,
    // and each page keeps a core busy in the database and here.
    async exportPage(input: { exportId: string; cursor: PageCursor }): Promise<PageCursor | null> {
      return asActivity(async () => {
        const started = performance.now();
        const page = await exportPage(orm.em.fork(), input.exportId, input.cursor);
        if (page.next && page.orgId && (await othersActive(page.orgId)))
          await pause(Math.min(PAUSE_MAX_MS, (performance.now() - started) * (1 / busyShare - 1)));
        return page.next;
      });
    },
    async finishExport(input: { exportId: string; error: string | null }): Promise<void> {
      await finishExport(orm.em.fork(), input.exportId, input.error);
    },
  };
}
