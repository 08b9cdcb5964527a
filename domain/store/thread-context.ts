import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { query, sql } from '../sql.ts';
import { inThread, memoriesNamed, threadOrder, threadPosition } from './threads.ts';
import { curateJob } from './curate.ts';

// A chunk of a thread (metadata.parent_ref: a conversation's turns, a document's parts) often means little
// alone: "Yes, twice, both last summer!" answers the turn before it. So the vector searched for a memory in a
// thread is its text's vector plus CONTEXT_WEIGHT times the text vectors of the CONTEXT_CHUNKS live chunks
// before it in thread order (threads.ts), as a unit vector; its text's own vector is kept beside
// it (memory_embeddings.text_embedding), for reuse by identical text and for mixing into the chunks after it.
// On LoCoMo's conversations this raises hybrid search's evidence recall; memories outside threads are embedded
// as before.
export const CONTEXT_CHUNKS = 2;
export const CONTEXT_WEIGHT = 0.3;

export function withContext(own: Float32Array, before: Float32Array[]): Float32Array {
  const mixed = Float32Array.from(own);
  for (const v of before) for (let d = 0; d < mixed.length; d++) mixed[d]! += CONTEXT_WEIGHT * v[d]!;
  let norm = 0;
  for (const x of mixed) norm += x * x;
  norm = Math.sqrt(norm);
  return norm > 0 ? mixed.map((x) => x / norm) : mixed;
}

export interface ChunkContext {
  // The hash of the memory's text, its current text vector of the model and the vector searched for it now (null
  // without one, or when the caller knows it).
  hash: string;
  own: string | null;
  searched: string | null;
  // The chunks before it, each with its text's hash and current text vector (null likewise).
  before: { id: string; hash: string; vector: string | null }[];
}

// For each of `ids` that is a chunk of a thread, its context; memories outside threads are absent from the map.
// The vectors of the memories in `known` (those the caller has just computed) are not read: null in their place.
// Vectors travel as text, and a batch of chunks saved in order would otherwise read each one up to four times.
export async function contextsOf(
  em: EntityManager,
  orgId: string,
  model: string,
  ids: string[],
  known: string[] = [],
): Promise<Map<string, ChunkContext>> {
  const rows = await query(
    em,
    sql<{
      id: string;
      hash: string;
      own: string | null;
      searched: string | null;
      before_id: string | null;
      before_hash: string | null;
      before_vector: string | null;
    }>`
      select x.id, md5(x.content) as hash,
             case when k.x is null then coalesce(ex.text_embedding, ex.embedding)::text end as own,
               case when k.x is null then ex.embedding::text end as searched,
             p.id as before_id, md5(p.content) as before_hash, case when kp.x is null then coalesce(ep.text_embedding,
               ep.embedding)::text end as before_vector
        from ${memoriesNamed(orgId, ids)}
        left join unnest(${known}::uuid[]) as k(x) on k.x = x.id
        left join memory_embeddings ex on ex.org_id = x.org_id and ex.memory_id = x.id and ex.passage = 0 and ex.model = ${model}
          and ex.content_hash = md5(x.content)
        left join lateral (
          select m.id, m.content from memories m
           where ${inThread(orgId, sql`x.metadata->>'parent_ref'`)} and ${threadPosition('m')} < ${threadPosition('x')}
           order by ${threadOrder('m', 'desc')} limit ${CONTEXT_CHUNKS}) p on true
        left join unnest(${known}::uuid[]) as kp(x) on kp.x = p.id
        left join memory_embeddings ep on ep.org_id = ${orgId} and ep.memory_id = p.id and ep.passage = 0 and ep.model = ${model}
          and ep.content_hash = md5(p.content)
       where x.superseded_by is null and x.metadata ? 'parent_ref'`,
  );
  const contexts = new Map<string, ChunkContext>();
  for (const r of rows) {
    const context = contexts.get(r.id) ?? { hash: r.hash, own: r.own, searched: r.searched, before: [] };
    if (r.before_id) context.before.push({ id: r.before_id, hash: r.before_hash!, vector: r.before_vector });
    contexts.set(r.id, context);
  }
  return contexts;
}

// The chunks whose context includes one of `ids`: the CONTEXT_CHUNKS live chunks after each in its thread, with
// the memory they follow (`source`) and their place after it (1, 2); with `where` (a condition on memories `m`),
// only those it passes; `alive` as in inThread.
export const chunksAfterNamed = (orgId: string, ids: string[], where?: RawBuilder<unknown>, alive?: RawBuilder<unknown>) => sql<{
  source: string;
  id: string;
  place: number;
}>`
  select x.id as source, s.id, s.place from ${memoriesNamed(orgId, ids)}
   cross join lateral (
     select m.id, row_number() over (order by ${threadOrder('m', 'asc')})::int as place from memories m
      where ${inThread(orgId, sql`x.metadata->>'parent_ref'`, alive)} and ${threadPosition('m')} > ${threadPosition('x')}
      order by ${threadOrder('m', 'asc')} limit ${CONTEXT_CHUNKS}) s
   where x.metadata ? 'parent_ref'
     ${where ? sql`and exists (select 1 from memories m where m.org_id = ${orgId} and m.id = s.id and ${where} offset 0)` : sql``}`;

// Those chunks' ids, less `ids` themselves.
export async function chunksAfter(em: EntityManager, orgId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const named = new Set(ids);
  return [...new Set((await query(em, chunksAfterNamed(orgId, ids))).map((r) => r.id))].filter((id) => !named.has(id));
}

// In the transaction of a write that takes `ids` out of their place in a thread (a delete, a merge, a move): the
// org's curator mixes the chunks after them again, and `also` (a moved memory itself).
export async function remixChunksAfter(tx: EntityManager, orgId: string, ids: string[], also: string[] = []): Promise<void> {
  const remix = [...also, ...(await chunksAfter(tx, orgId, ids))];
  if (remix.length > 0) await enqueueJobs(tx, [curateJob(orgId, remix)]);
}
