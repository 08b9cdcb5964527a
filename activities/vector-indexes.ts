import type { MikroORM } from '@mikro-orm/postgresql';
import { buildOrgIndex, buildProgress, dropVectorIndex, planVectorIndexes, type VectorIndexPlan } from '../domain/store/vector-indexes.ts';
import { heartbeating } from './heartbeat.ts';

export interface VectorIndexActivityDeps {
  orm: MikroORM;
  // Vectors an org holds before its searches get an HNSW index of their own (VECTOR_INDEX_ORG_MIN).
  vectorIndexOrgMin: number;
}

// How often a build or a drop reports that it is alive, with how far it has come, for the Web UI's pending-activity
// panel.
const HEARTBEAT_MS = 10_000;

export function vectorIndexActivities(deps: VectorIndexActivityDeps) {
  return {
    async planVectorIndexes(): Promise<VectorIndexPlan> {
      return planVectorIndexes(deps.orm.em.fork(), deps.vectorIndexOrgMin);
    },
    async dropVectorIndex(input: { name: string }): Promise<void> {
      let moved = 0;
      await heartbeating(
        HEARTBEAT_MS,
        async () => ({ phase: 'moving rows back to the shared index', moved }),
        () => dropVectorIndex(deps.orm.em.fork(), input.name, (n) => (moved = n)),
      );
    },
    // A build takes a minute or more for a large org (43 s for 128,000 vectors on two cores), then its rows move out
    // of the shared index. If the worker dies meanwhile, PostgreSQL may go on with the build: the next attempt finds
    // the index valid and moves the rows (those moved already are skipped), or finds it still building and fails,
    // and the next run's plan drops the invalid index and builds it again.
    async buildOrgIndex(input: { orgId: string }): Promise<void> {
      let moved: number | null = null;
      await heartbeating(
        HEARTBEAT_MS,
        async () =>
          moved === null ? buildProgress(deps.orm.em.fork(), input.orgId) : { phase: 'moving rows out of the shared index', moved },
        () => buildOrgIndex(deps.orm.em.fork(), input.orgId, (n) => (moved = n)),
      );
    },
  };
}
