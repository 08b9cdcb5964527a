import type { RawBuilder } from 'kysely';
import { sql } from '../sql.ts';

// How a statement addresses the chunks of a thread (memories sharing metadata.parent_ref): their order, the rows
// named by id, the live chunks of one thread. The threads feature (domain/threads) and the thread context of
// embeddings and search (thread-context.ts) read threads through these.

// A chunk's place in its thread (`alias` names the memories row in the statement): metadata.chunk_index when it is
// a number, chunks without one after those with one, then creation. memories_thread_order_idx (migrations/0020)
// indexes these columns, so a thread read in order, or the chunks next to one, is an index range.
const chunkKey = (alias: string) => {
  const m = sql.raw(alias);
  return sql`coalesce(case when jsonb_typeof(${m}.metadata->'chunk_index') = 'number'
      then (${m}.metadata->>'chunk_index')::numeric end, 'Infinity')`;
};
export const threadPosition = (alias: string) => sql`(${chunkKey(alias)}, ${sql.raw(alias)}.created_at, ${sql.raw(alias)}.id)`;
export const threadOrder = (alias: string, direction: 'asc' | 'desc') => {
  const [m, d] = [sql.raw(alias), sql.raw(direction)];
  return sql`${chunkKey(alias)} ${d}, ${m}.created_at ${d}, ${m}.id ${d}`;
};
// The org's memories `ids`, as rows `x` of a FROM list, each read by its primary key. OFFSET 0 keeps the probes:
// with a plain `x.id = any(...)`, an org the statistics do not know yet (estimated at one row) was read through the
// thread-order index, every chunk the org has for each statement.
export const memoriesNamed = (orgId: string, ids: string[]) =>
  sql`unnest(${ids}::uuid[]) as named(id) cross join lateral (select * from memories m where m.org_id = ${orgId} and m.id = named.id
    offset 0) x`;

// The live chunks of the thread `ref` (a text expression), as a condition on `m`; `alive` says which are live (those
// not superseded, unless a search as of a past time says otherwise).
export const inThread = (orgId: string, ref: RawBuilder<unknown>, alive: RawBuilder<unknown> = sql`m.superseded_by is null`) =>
  sql`m.org_id = ${orgId} and ${alive} and m.metadata ? 'parent_ref' and m.metadata->>'parent_ref' = ${ref}`;
