import type { MikroORM } from '@mikro-orm/postgresql';
import { exportPage, finishExport, type PageCursor } from '../domain/exports/exports.ts';

export function exportActivities({ orm }: { orm: MikroORM }) {
  return {
    async exportPage(input: { exportId: string; cursor: PageCursor }): Promise<PageCursor | null> {
      return exportPage(orm.em.fork(), input.exportId, input.cursor);
    },
    async finishExport(input: { exportId: string; error: string | null }): Promise<void> {
      await finishExport(orm.em.fork(), input.exportId, input.error);
    },
  };
}
