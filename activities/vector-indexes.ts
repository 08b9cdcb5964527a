import { Context } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import { buildOrgIndex, buildProgress, dropVectorIndex, planVectorIndexes, type VectorIndexPlan } from '../domain/search/vector-indexes.ts';

export interface VectorIndexActivityDeps {
  orm: MikroORM;
  // Vectors an org holds before its searches get an HNSW index of their own (VECTOR_INDEX_ORG_MIN).
  vectorIndexOrgMin: number;
}

// How often a build reports that it is alive, with PostgreSQL's progress for the Web UI's pending-activity panel.
const HEARTBEAT_MS = 10_000;

export function vectorIndexActivities(deps: VectorIndexActivityDeps) {
  return {
    async planVectorIndexes(): Promise<VectorIndexPlan> {
      return planVectorIndexes(deps.orm.em.fork(), deps.vectorIndexOrgMin);
    },
    async dropVectorIndex(input: { name: string }): Promise<void> {
      await dropVectorIndex(deps.orm.em.fork(), input.name);
    },
    // A build takes minutes for a large org (40 s for 128,000 vectors on two cores). If the worker dies, its
    // connection goes and PostgreSQL stops the build, leaving an invalid index that the next plan drops.
    async buildOrgIndex(input: { orgId: string }): Promise<void> {
      const ctx = Context.current();
      const beat = setInterval(() => {
        buildProgress(deps.orm.em.fork(), input.orgId).then(
          (progress) => ctx.heartbeat(progress),
          () => ctx.heartbeat(null),
        );
      }, HEARTBEAT_MS);
      try {
        await buildOrgIndex(deps.orm.em.fork(), input.orgId);
      } finally {
        clearInterval(beat);
      }
    },
  };
}
