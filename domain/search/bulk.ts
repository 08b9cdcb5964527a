import type { EntityManager } from '@mikro-orm/postgresql';
import { availableParallelism } from 'node:os';
import type { MemoryFilters } from '../memories/filters.ts';
import { searchMemories, type QueryVector, type SearchHit, type SearchMode } from './search.ts';

// As many statements at once as there are cores: each search is CPU-bound in the database, and more
// concurrent statements than cores only add switching (measured: 25 at once was 15-25% slower than 2 on
// a 2-core machine).
const PARALLELISM = Math.max(2, availableParallelism());

// Runs the queries in parallel, each on its own connection, and returns the hits in query order. For
// semantic and hybrid, `vectors` holds every query's embedding, computed in one batch.
export async function searchBulk(
  fork: () => EntityManager,
  orgId: string,
  queries: string[],
  options: { k: number; mode: SearchMode; filters: MemoryFilters; vectors?: Promise<QueryVector[]> | undefined },
): Promise<SearchHit[][]> {
  const results: SearchHit[][] = new Array(queries.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < queries.length; i = next++) {
      const vector = options.vectors?.then((all) => all[i]!);
      results[i] = await searchMemories(fork(), orgId, { text: queries[i]!, k: options.k, mode: options.mode, filters: options.filters }, vector);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLELISM, queries.length) }, worker));
  return results;
}
