import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { TRANSACTION, VECTOR_INDEX_WORK } from './options.ts';

const { planVectorIndexes } = proxyActivities<Activities>(TRANSACTION);
const { buildOrgIndex, dropVectorIndex } = proxyActivities<Activities>(VECTOR_INDEX_WORK);

export interface VectorIndexRun {
  built: string[];
  dropped: string[];
  // Orgs whose build failed after its retries: the next run tries again.
  failed: { orgId: string; error: string }[];
}

// Run by the `vector-indexes-<task queue>` schedule: gives each org that has grown large its own vector index and
// drops those no longer wanted (domain/store/vector-indexes.ts). Drops go first, since an invalid index left by a
// failed build is dropped before it is built again. Builds run one at a time, largest org first: a build takes
// the server's parallel maintenance workers while it runs, and PostgreSQL serializes builds on a table anyway.
export async function vectorIndexesWorkflow(): Promise<VectorIndexRun> {
  const plan = await planVectorIndexes();
  const run: VectorIndexRun = { built: [], dropped: [], failed: [] };
  for (const name of plan.drop) {
    await dropVectorIndex({ name });
    run.dropped.push(name);
  }
  for (const orgId of plan.build) {
    try {
      await buildOrgIndex({ orgId });
      run.built.push(orgId);
    } catch (err) {
      run.failed.push({
        orgId,
        error: err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err),
      });
    }
  }
  return run;
}
