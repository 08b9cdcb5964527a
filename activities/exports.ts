import type { MikroORM } from '@mikro-orm/postgresql';
import { exportPage, finishExport, type PageCursor } from '../domain/exports/exports.ts';
import { asActivity } from './failures.ts';

export function exportActivities({ orm }: { orm: MikroORM }) {
  return {
    async exportPage(input: { exportId: string; cursor: PageCursor }): Promise<PageCursor | null> {
      return asActivity(() => exportPage(orm.em.fork(), input.exportId, input.cursor));
    },
    async finishExport(input: { exportId: string; error: string | null }): Promise<void> {
      await finishExport(orm.em.fork(), input.exportId, input.error);
    },
  };
}
