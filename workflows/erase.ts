import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { DeletionJob } from '../domain/memories/delete-by-filter.ts';
import type { ProjectErasure } from '../domain/projects/delete.ts';
import { ERASURE } from './options.ts';

const { eraseProjectBatch, eraseOrgBatch, deletionBatch } = proxyActivities<Activities>(ERASURE);

// Batches per run before continuing as new: three history events each, well under Temporal's limits.
const BATCHES_PER_RUN = 500;

// `project-erase-<namespace id>`, started through the outbox when a project is deleted: batch after batch
// until none is left. Returns how many memories it erased in all.
export async function projectEraseWorkflow(job: ProjectErasure, erasedBefore = 0): Promise<number> {
  let erased = erasedBefore;
  for (let i = 0; i < BATCHES_PER_RUN; i++) {
    const n = await eraseProjectBatch(job);
    if (n === 0) return erased;
    erased += n;
  }
  return continueAsNew<typeof projectEraseWorkflow>(job, erased);
}

// `org-erase-<org id>`, started through the outbox when an account deletion removes an org's last member:
// every row of the org, batch by batch, then the org itself. Returns how many rows it erased in all.
export async function orgEraseWorkflow(orgId: string, erasedBefore = 0): Promise<number> {
  let erased = erasedBefore;
  for (let i = 0; i < BATCHES_PER_RUN; i++) {
    const n = await eraseOrgBatch(orgId);
    if (n === 0) return erased;
    erased += n;
  }
  return continueAsNew<typeof orgEraseWorkflow>(orgId, erased);
}

// `memory-deletion-<deletion id>`, started through the outbox by a deletion by filter: batch after batch of the
// memories that match, until none is left (the last batch marks the deletion completed). Returns how many it deleted.
export async function memoryDeletionWorkflow(job: DeletionJob, deletedBefore = 0): Promise<number> {
  let deleted = deletedBefore;
  for (let i = 0; i < BATCHES_PER_RUN; i++) {
    const n = await deletionBatch(job);
    if (n === 0) return deleted;
    deleted += n;
  }
  return continueAsNew<typeof memoryDeletionWorkflow>(job, deleted);
}
