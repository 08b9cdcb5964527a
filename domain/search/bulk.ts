import type { EntityManager } from '@mikro-orm/postgresql';
import { availableParallelism } from 'node:os';
import type { FairSlots } from '../fair-slots.ts';
import type { MemoryFilters } from '../store/filters.ts';
import type { SearchMode } from './modes.ts';
import type { FreshVectors } from './fresh.ts';
import type { TimeWindow } from './time-words.ts';
import { searchAsOf } from './as-of.ts';
import { searchMemories, type SearchAnswer } from './search.ts';
import { type QueryVector } from './semantic.ts';

// As many statements at once as there are cores: each search is CPU-bound in the database, and more
// concurrent statements than cores only add switching (measured: 25 at once was 15-25% slower than 2 on
// a 2-core machine).
const PARALLELISM = Math.max(2, availableParallelism());

// Runs the queries in parallel, each on its own connection, and returns the hits in query order. For
// semantic and hybrid, `vectors` holds every query's embedding, computed in one batch. Each search takes one of the
// process's search slots (search-slots.ts).
export async function searchBulk(
  fork: () => EntityManager,
  orgId: string,
  queries: string[],
  options: {
    k: number;
    mode: SearchMode;
    filters: MemoryFilters;
    minRelevance?: number | undefined;
    // Each query's window of event time (time-words.ts), in query order.
    windows?: (TimeWindow | null)[] | undefined;
    // A search as of that time (as-of.ts), for every query.
    asOf?: number | undefined;
    vectors?: Promise<QueryVector[]> | undefined;
    fresh?: FreshVectors | undefined;
    slots: FairSlots;
  },
): Promise<SearchAnswer[]> {
  const { slots } = options;
  // The questions are embedded before any slot is taken, so that no slot waits on the model (or a provider's round
  // trip) while other orgs' searches wait for it; the model's time counts against the org's share all the same.
  const embedding = performance.now();
  const vectors = await options.vectors;
  if (vectors) slots.charge(orgId, performance.now() - embedding);
  const results: SearchAnswer[] = new Array(queries.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < queries.length; i = next++) {
      const vector = vectors ? Promise.resolve(vectors[i]!) : undefined;
      const text = queries[i]!;
      const request = {
        text,
        k: options.k,
        mode: options.mode,
        filters: options.filters,
        minRelevance: options.minRelevance,
        window: options.windows?.[i],
      };
      const { asOf } = options;
      results[i] = await slots.run(orgId, () =>
        asOf !== undefined
          ? searchAsOf(fork(), orgId, { ...request, asOf }, vector, options.fresh)
          : searchMemories(fork(), orgId, request, vector, options.fresh),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLELISM, queries.length) }, worker));
  return results;
}
