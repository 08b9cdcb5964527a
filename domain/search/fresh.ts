import type { EntityManager } from '@mikro-orm/postgresql';
import { LRUCache } from 'lru-cache';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Embedder } from '../store/embedder.ts';
import type { CompiledFilters } from '../store/filters.ts';
import { query, sql } from '../sql.ts';
import { embeddingStatus } from '../store/vectors.ts';
import { byRank, type Ranked } from './fusion.ts';
import type { QueryVector } from './semantic.ts';
import { vectorKey } from './query-vectors.ts';

// Fresh results: a memory saved a moment ago has no vector yet (the curator embeds it in the background, usually
// within a second), so a search by meaning would miss it. A search by meaning therefore looks at the org's latest
// writes when the org's counters say some memory waits for its vector, embeds the few of them its filters pass
// (FRESH_EMBED_MAX, the most recent first) with the model's document embedding, and scores them by cosine with the
// query, as the index would. They are scored without thread context (a stored chunk's vector mixes in the chunks
// before it). Nothing is stored: the curator still writes their vectors. When the org waits on nothing, all this
// costs one read of the counters.

// The org's latest writes looked at, and how many of those the filters pass a search embeds at most.
export const FRESH_SCAN = 200;
export const FRESH_EMBED_MAX = 8;
// How long a search waits for those vectors; past it they count as pending instead.
export const FRESH_WAIT_MS = 250;
// Enough of a long memory's beginning for the model, which reads 512 tokens.
const FRESH_TEXT_CHARS = 2000;

// Document vectors of memories, by id, computed once per request however many searches it makes (bulk search).
export type FreshVectors = (memories: { id: string; content: string }[]) => Promise<Map<string, Float32Array>>;

// Vectors of waiting memories computed for earlier searches, by a digest of the org, the model and the text: while
// an org's backlog drains (a batch import, a burst of saves), its newest memories stay the same from one search to
// the next, and embedding them again was most of each search's time. An org never gets another org's entry, and an
// edited memory's new text misses. At most about 3 MB.
const FRESH_CACHE_ENTRIES = 2_000;
const computedBefore = new LRUCache<string, Float32Array>({ max: FRESH_CACHE_ENTRIES });

// A request's fresh vectors, from the org's turn of the model; none without a model.
export function freshVectors(embedder: Embedder | null, orgId: string): FreshVectors | undefined {
  if (!embedder) return undefined;
  const known = new Map<string, Promise<Float32Array | null>>();
  return async (memories) => {
    const missing: { id: string; text: string; key: string }[] = [];
    for (const m of memories) {
      if (known.has(m.id)) continue;
      const text = m.content.slice(0, FRESH_TEXT_CHARS);
      const key = vectorKey(orgId, embedder.model, text);
      const cached = computedBefore.get(key);
      if (cached) known.set(m.id, Promise.resolve(cached));
      else missing.push({ id: m.id, text, key });
    }
    if (missing.length > 0) {
      const computed = embedder.embedDocuments(
        missing.map((m) => m.text),
        orgId,
      );
      missing.forEach((m, i) =>
        known.set(
          m.id,
          computed.then(
            (vectors) => {
              const vector = vectors[i] ?? null;
              if (vector) computedBefore.set(m.key, vector);
              return vector;
            },
            () => null,
          ),
        ),
      );
    }
    const vectors = await Promise.all(memories.map(async (m) => [m.id, await known.get(m.id)!] as const));
    return new Map(vectors.filter((v): v is readonly [string, Float32Array] => v[1] !== null));
  };
}

interface Latest {
  id: string;
  content: string;
  passes: boolean;
  pending: boolean;
}

// The memories the filters pass that wait for a vector, scored by meaning when `embed` answers in time,
// and how many of them remain unscored: exact while the org's backlog lies among its FRESH_SCAN latest writes, an
// upper bound otherwise (the older ones are counted whatever their scope).
export async function freshRanking(
  em: EntityManager,
  orgId: string,
  vector: Promise<QueryVector>,
  compiled: CompiledFilters,
  embed: FreshVectors,
): Promise<{ ranked: Ranked[]; pending: number }> {
  const { vector: q, model } = await vector;
  const status = await embeddingStatus(em, orgId, model);
  const waiting = Math.max(0, status.total - status.embedded);
  if (waiting === 0) return { ranked: [], pending: 0 };
  const latest = await query(
    em,
    sql<Latest>`select m.id, m.content, ${compiled.where} as passes,
        not exists (select 1 from memory_embeddings e where e.org_id = m.org_id and e.memory_id = m.id and e.passage = 0
                     and e.model = ${model} and e.content_hash = md5(m.content)) and m.superseded_by is null as pending
      from (select * from memories where org_id = ${orgId} order by updated_at desc, id desc limit ${FRESH_SCAN}) m
      order by m.updated_at desc, m.id desc`,
  );
  const inScope = latest.filter((m) => m.passes && m.pending);
  const unseen = Math.max(0, waiting - latest.filter((m) => m.pending).length);
  const chosen = inScope.slice(0, FRESH_EMBED_MAX);
  const vectors = chosen.length > 0 ? await withinWait(embed(chosen)) : new Map<string, Float32Array>();
  const ranked = chosen.filter((m) => vectors.has(m.id)).map((m) => ({ id: m.id, score: dot(q, vectors.get(m.id)!) }));
  return { ranked: ranked.sort(byRank), pending: inScope.length - ranked.length + unseen };
}

async function withinWait(vectors: Promise<Map<string, Float32Array>>): Promise<Map<string, Float32Array>> {
  const timer = new AbortController();
  try {
    return await Promise.race([vectors, sleep(FRESH_WAIT_MS, new Map<string, Float32Array>(), { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}

// Both vectors are of unit length, so this is their cosine similarity.
function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}
