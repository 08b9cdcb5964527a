import type { MikroORM } from '@mikro-orm/postgresql';
import { eraseOrgBatch } from '../domain/erasure/orgs.ts';
import { deletionBatch, type DeletionJob } from '../domain/memories/delete-by-filter.ts';
import { eraseProjectBatch, type ProjectErasure } from '../domain/projects/delete.ts';

export function erasureActivities({ orm }: { orm: MikroORM }) {
  return {
    async eraseProjectBatch(job: ProjectErasure): Promise<number> {
      return eraseProjectBatch(orm.em.fork(), job);
    },
    async eraseOrgBatch(orgId: string): Promise<number> {
      return eraseOrgBatch(orm.em.fork(), orgId);
    },
    async deletionBatch(job: DeletionJob): Promise<number> {
      return deletionBatch(orm.em.fork(), job);
    },
  };
}
