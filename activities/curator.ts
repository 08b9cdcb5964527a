import type { MikroORM } from '@mikro-orm/postgresql';
import type { Embedder } from '../domain/store/embedder.ts';
import { embedMemories, embedPage, noOutcome, type EmbedOutcome } from '../domain/embeddings/store.ts';
import { compactPostings, FOLD_MEMORIES, foldPostings } from '../domain/search/fold.ts';
import { embeddingsComputed } from '../infra/metrics.ts';
import { heartbeating } from './heartbeat.ts';

export interface CuratorActivityDeps {
  orm: MikroORM;
  // Null when the worker has no model (EMBEDDING_PROVIDER=none, or a model that failed to load).
  embedder: Embedder | null;
  // True when embeddings are turned off on purpose: the curator then has nothing to do, rather than waiting.
  embeddingsDisabled: boolean;
}

// Memories a backfill embeds per activity at most (of the BACKFILL_EXAMINE it examines): large enough to amortize
// the round trips, small enough that one attempt stays well inside its time limit on two cores.
const BACKFILL_PAGE = 256;

// A fold activity keeps folding for about this long, then hands back to the workflow.
const FOLD_BUDGET_MS = 10_000;
// How often a fold attempt says it is alive (well inside POSTINGS_FOLD's heartbeatTimeout).
const FOLD_HEARTBEAT_MS = 5_000;

export function curatorActivities(deps: CuratorActivityDeps) {
  // A missing model is worth waiting for (the activity is retried until an operator fixes the worker).
  const model = (): Embedder | null => {
    if (deps.embedder) return deps.embedder;
    if (deps.embeddingsDisabled) return null;
    throw new Error('this worker has no embedding model loaded (see its log and EMBEDDING_* settings)');
  };
  return {
    async embedMemories(input: { orgId: string; ids: string[] }): Promise<EmbedOutcome> {
      const embedder = model();
      const outcome = embedder ? await embedMemories(deps.orm.em.fork(), embedder, input.orgId, input.ids) : noOutcome();
      embeddingsComputed.inc(outcome.embedded);
      return outcome;
    },
    // Folds the org's staged postings into blocks (domain/search/fold.ts), then compacts its tombstones if they
    // have grown past the limit. `more` asks to be called again at once.
    async foldPostings(input: { orgId: string }): Promise<{ folded: number; compacted: number; more: boolean }> {
      const started = Date.now();
      let folded = 0;
      let more = true;
      return heartbeating(
        FOLD_HEARTBEAT_MS,
        async () => ({ folded }),
        async () => {
          while (more && Date.now() - started < FOLD_BUDGET_MS) {
            const n = await foldPostings(deps.orm.em.fork(), input.orgId);
            folded += n;
            // Only a full fold goes on at once. A smaller one leaves what arrives meanwhile to the next, FOLD_INTERVAL
            // later: each fold writes a block per distinct term it holds, and folding as fast as saves came (about 100
            // memories a fold, 18 distinct terms a memory) cost more than the saves themselves; a fold of 2,000 has 3.3.
            more = n === FOLD_MEMORIES;
          }
          const compacted = more ? 0 : await compactPostings(deps.orm.em.fork(), input.orgId);
          return { folded, compacted, more };
        },
      );
    },
    async embedPage(input: { orgId: string; cursor: string | null }): Promise<{ outcome: EmbedOutcome; next: string | null }> {
      const embedder = model();
      const page = embedder
        ? await embedPage(deps.orm.em.fork(), embedder, input.orgId, input.cursor, BACKFILL_PAGE)
        : { outcome: noOutcome(), next: null };
      embeddingsComputed.inc(page.outcome.embedded);
      return page;
    },
  };
}
