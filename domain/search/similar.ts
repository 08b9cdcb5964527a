import type { EntityManager } from '@mikro-orm/postgresql';
import { embeddingsUnavailable } from '../store/embedder.ts';
import { conflict, notFound } from '../errors.ts';
import type { MemoryFilters } from '../store/filters.ts';
import { queryOne, sql } from '../sql.ts';
import { searchMemories, type SearchHit } from './search.ts';
import { parseVector } from '../store/vectors.ts';

// The memories nearest in meaning to one memory ("more like this"): its stored vector, the one search finds it by
// (for a chunk of a thread, mixed with the chunks before it), is the query, so no model runs and the answer is
// the same whether or not the model is up. Compared document to document, without the model's query instruction,
// as bge and e5 are meant to be for symmetric similarity. Otherwise a semantic search (search.ts): the same
// filters, scan and scores (cosine similarity), with the memory itself left out; a copy of its text scores 1.
export async function similarMemories(
  em: EntityManager,
  orgId: string,
  model: string | null,
  id: string,
  k: number,
  filters: MemoryFilters,
): Promise<SearchHit[]> {
  if (model === null) throw embeddingsUnavailable('no embedding model is configured on this server');
  const row = await queryOne(
    em,
    sql<{ vector: string | null }>`select e.embedding::text as vector from memories m
      left join memory_embeddings e on e.org_id = m.org_id and e.memory_id = m.id and e.passage = 0 and e.model = ${model}
        and e.content_hash = md5(m.content)
      where m.org_id = ${orgId} and m.id = ${id}`,
  );
  if (!row) throw notFound('memory', id);
  if (row.vector === null) {
    throw conflict(
      'embedding_pending',
      `this memory has no vector of ${model} yet: the worker embeds it in the background, usually within seconds of its save ` +
        `(GET /api/memories/embeddings shows the backlog)`,
    );
  }
  const { hits } = await searchMemories(
    em,
    orgId,
    { text: '', k: k + 1, mode: 'semantic', filters },
    Promise.resolve({ vector: parseVector(row.vector), model }),
  );
  return hits.filter((h) => h.id !== id).slice(0, k);
}
