import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { requireRole } from '../accounts/roles.ts';
import { recordAudit } from '../audit/record.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { query, sql } from '../sql.ts';
import { ORG_COUNTERS } from '../store/counters.ts';
import { curateJob } from '../store/curate.ts';
import { vectorCounter } from '../store/vectors.ts';

// Asks the org's curator to walk every memory and embed those without a vector of the current model.
export async function requestBackfill(em: EntityManager, caller: Caller): Promise<void> {
  requireRole(caller, 'admin');
  await em.transactional(async (tx) => {
    await enqueueJobs(tx, [curateJob(caller.orgId, [], [], true)]);
    await recordAudit(tx, { orgId: caller.orgId, action: 'embeddings.backfill', targetId: null, actor: actorOf(caller), details: {} });
  });
}

// At worker start: every org whose memories outnumber its vectors of `model` (a new deployment, a change of
// model, or ids dropped while the model was down) gets a backfill, read from the counters of both; so does every
// org a migration asked a walk of (embedding_backfills: migrations/0021 for the passages of long memories), once.
export async function backfillLagging(em: EntityManager, model: string): Promise<number> {
  return em.transactional(async (tx) => {
    const rows = await query(
      tx,
      sql<{ org_id: string }>`with live as (
          select org_id, sum(value) as n from counters where name = ${ORG_COUNTERS.live} and scope_id = org_id group by org_id
          having sum(value) > 0),
        have as (select org_id, sum(value) as n from counters where name = ${vectorCounter(model)} and scope_id = org_id group by org_id),
        requested as (delete from embedding_backfills returning org_id)
        select live.org_id from live left join have using (org_id) where coalesce(have.n, 0) < live.n
        union select org_id from requested`,
    );
    await enqueueJobs(
      tx,
      rows.map(({ org_id }) => curateJob(org_id, [], [], true)),
    );
    return rows.length;
  });
}
