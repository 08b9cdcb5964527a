import { allHandlersFinished, condition, continueAsNew, defineQuery, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { CurateRequest } from '../domain/embeddings/curate.ts';
import type { EmbedOutcome } from '../domain/embeddings/store.ts';
import { EMBEDDING_BATCH } from './options.ts';

const { embedMemories, embedPage } = proxyActivities<Activities>(EMBEDDING_BATCH);

export const curateSignal = defineSignal<[CurateRequest]>('curate');

export interface CuratorBacklog {
  // Memories signalled and not yet embedded, and whether a backfill scan is under way (and where it is).
  pending: number;
  backfilling: boolean;
  backfillCursor: string | null;
  // What this actor has done since it was started, across continue-as-new.
  totals: EmbedOutcome;
}
export const backlogQuery = defineQuery<CuratorBacklog>('backlog');

export interface CuratorState {
  orgId: string;
  pending?: string[];
  backfill?: { cursor: string | null } | null;
  totals?: EmbedOutcome;
}

// Memories embedded per activity: a model call of this many texts keeps both cores busy.
export const CURATOR_BATCH = 64;
// Ids kept in the workflow's state at most; past that the list is dropped for a backfill scan, which finds the
// same memories in the database, so a long outage of the model cannot grow the history without bound.
export const CURATOR_MAX_PENDING = 5_000;
// An org with nothing to do for this long lets its curator end; the next signal starts a new run.
const IDLE = '1 hour';

// The org's actor for continuous background work (`memory-curator-<org id>`): signals carry the ids of saved
// and edited memories, which it embeds in batches, one batch at a time, so one org's burst never floods the
// worker. A backfill request walks every memory of the org instead. Its state travels through
// continue-as-new before the history grows large.
export async function memoryCuratorWorkflow(state: CuratorState): Promise<EmbedOutcome> {
  const { orgId } = state;
  const pending = new Set(state.pending ?? []);
  let backfill = state.backfill ?? null;
  const totals: EmbedOutcome = state.totals ?? { embedded: 0, reused: 0, current: 0 };
  const count = (o: EmbedOutcome) => {
    totals.embedded += o.embedded;
    totals.reused += o.reused;
    totals.current += o.current;
  };

  setHandler(curateSignal, (request) => {
    for (const id of request.ids) pending.add(id);
    if (request.backfill || pending.size > CURATOR_MAX_PENDING) {
      pending.clear();
      backfill = { cursor: null };
    }
  });
  setHandler(backlogQuery, () => ({ pending: pending.size, backfilling: backfill !== null, backfillCursor: backfill?.cursor ?? null, totals: { ...totals } }));

  for (;;) {
    if (!(await condition(() => pending.size > 0 || backfill !== null, IDLE))) {
      await condition(allHandlersFinished);
      return totals;
    }
    if (pending.size > 0) {
      const ids = [...pending].slice(0, CURATOR_BATCH);
      for (const id of ids) pending.delete(id);
      count(await embedMemories({ orgId, ids }));
    } else if (backfill) {
      const walking = backfill;
      const page = await embedPage({ orgId, cursor: walking.cursor });
      count(page.outcome);
      // A backfill requested again meanwhile starts over; otherwise this one moves on.
      if (backfill === walking) backfill = page.next ? { cursor: page.next } : null;
    }
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof memoryCuratorWorkflow>({ orgId, pending: [...pending], backfill, totals });
    }
  }
}
