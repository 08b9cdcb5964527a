import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { notFound } from '../errors.ts';
import { namespaceIdOf } from '../store/namespaces.ts';
import { query, sql, toDate } from '../sql.ts';
import { isUuid } from '../ids.ts';
import { inThread, threadOrder } from '../store/threads.ts';

export interface ThreadSummary {
  parentRef: string;
  namespace: string;
  count: number;
  firstAt: number;
  lastAt: number;
  title: string;
  hasChunks: boolean;
}

export interface Thread {
  parentRef: string;
  chunks: { id: string; content: string; metadata: Record<string, unknown> }[];
}

const TITLE_LENGTH = 80;

// Memories sharing metadata.parent_ref form a thread: a conversation (the conversations API sets parent_ref to the
// conversation's id; an agent may set it on any save), whatever its number of memories. A memory without one is a
// thread of its own, keyed by its id, unless `solo` is false: then only conversations are listed. The title is
// metadata.title of the thread's first memory, else the start of its content.
// Threads come newest activity first (ties by ref).
//
// Cost grows with the page, not with the org: a thread's last activity is its newest memory, so walking the
// org's memories newest first (an index range) meets the threads in page order; the walk reads twice as far
// each time until it has met offset + limit threads whose order nothing unread can change. Only the page's
// threads are then aggregated, by their ref (parent_ref index, or the id of a solo memory).
// Conversations only, the walk meets only the memories with a parent_ref: PostgreSQL reads them from the thread-order
// index when they are few, or walks the org's newest memories past the solo ones when they are many.
export async function listThreads(
  em: EntityManager,
  orgId: string,
  q: { namespace?: string | undefined; solo?: boolean | undefined; limit: number; offset: number },
): Promise<ThreadSummary[]> {
  let inNamespace = sql``;
  if (q.namespace !== undefined) {
    const id = await namespaceIdOf(em, orgId, q.namespace);
    if (!id) return [];
    inNamespace = sql`and m.namespace_id = ${id}`;
  }
  // Conversations only: the walk meets the memories that have a parent_ref and no other.
  const walked = q.solo === false ? sql`${inNamespace} and m.metadata ? 'parent_ref'` : inNamespace;
  const refs = await pageRefs(em, orgId, walked, q.offset + q.limit);
  const page = refs.slice(q.offset);
  if (page.length === 0) return [];
  const solo = q.solo === false ? [] : page.filter((ref) => isUuid(ref));
  const rows = await query(
    em,
    sql<{ parent_ref: string; namespace: string; count: string; first_at: string; last_at: string; title: string; has_chunks: boolean }>`
      with t as (
        select m.metadata->>'parent_ref' as ref, m.namespace_id, m.content, m.metadata, m.created_at, m.id
          from memories m
         where m.org_id = ${orgId} and m.superseded_by is null ${inNamespace}
           and m.metadata ? 'parent_ref' and m.metadata->>'parent_ref' = any(${page}::text[])
        union all
        select m.id::text, m.namespace_id, m.content, m.metadata, m.created_at, m.id
          from memories m
         where m.org_id = ${orgId} and m.superseded_by is null ${inNamespace}
           and m.id = any(${solo}::uuid[]) and m.metadata->>'parent_ref' is null
      )
      select ref as parent_ref,
             (array_agg(n.name order by t.created_at, t.id))[1] as namespace,
             count(*) as count, min(t.created_at) as first_at, max(t.created_at) as last_at,
             (array_agg(coalesce(t.metadata->>'title', left(t.content, ${TITLE_LENGTH})) order by t.created_at, t.id))[1] as title,
             bool_or(t.metadata ? 'chunk_index') as has_chunks
        from t join namespaces n on n.org_id = ${orgId} and n.id = t.namespace_id
       group by ref
       order by max(t.created_at) desc, ref`,
  );
  return rows.map((r) => ({
    parentRef: r.parent_ref,
    namespace: r.namespace,
    count: Number(r.count),
    firstAt: toDate(r.first_at).getTime(),
    lastAt: toDate(r.last_at).getTime(),
    title: r.title,
    hasChunks: r.has_chunks,
  }));
}

// The first `needed` thread refs in page order (last activity desc, then ref).
async function pageRefs(em: EntityManager, orgId: string, inNamespace: RawBuilder<unknown>, needed: number): Promise<string[]> {
  for (let scan = Math.max(64, needed * 4); ; scan *= 2) {
    const rows = await query(
      em,
      sql<{ ref: string; last_at: string; oldest: string | null; scanned: string }>`
        with recent as (
          select coalesce(m.metadata->>'parent_ref', m.id::text) as ref, m.created_at
            from memories m where m.org_id = ${orgId} and m.superseded_by is null ${inNamespace}
           order by m.created_at desc, m.id desc limit ${scan}
        )
        select ref, max(created_at) as last_at, (select min(created_at) from recent) as oldest, (select count(*) from recent) as scanned
          from recent group by ref order by max(created_at) desc, ref limit ${needed}`,
    );
    const exhausted = rows.length === 0 || Number(rows[0]!.scanned) < scan;
    // A thread not met yet has no memory newer than the oldest one read: it can only come after the threads
    // whose last activity is strictly newer than that.
    const settled = exhausted ? rows : rows.filter((r) => toDate(r.last_at).getTime() > toDate(r.oldest!).getTime());
    if (exhausted || settled.length >= needed) return settled.map((r) => r.ref);
  }
}

// Chunks in thread order.
export async function getThread(em: EntityManager, orgId: string, ref: string): Promise<Thread> {
  const chunks = await query(
    em,
    sql<{ id: string; content: string; metadata: Record<string, unknown> }>`
      select m.id, m.content, m.metadata from memories m where ${inThread(orgId, sql`${ref}::text`)} order by ${threadOrder('m', 'asc')}`,
  );
  if (chunks.length > 0) return { parentRef: ref, chunks };
  if (isUuid(ref)) {
    const single = await query(
      em,
      sql<{
        id: string;
        content: string;
        metadata: Record<string, unknown>;
      }>`select id, content, metadata from memories where org_id = ${orgId} and id = ${ref}`,
    );
    if (single.length > 0) return { parentRef: ref, chunks: single };
  }
  throw notFound('thread', ref);
}
