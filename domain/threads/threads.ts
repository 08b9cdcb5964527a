import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../errors.ts';
import { namespaceIdOf } from '../memories/namespaces.ts';
import { query, sql, toDate } from '../sql.ts';

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

// Memories sharing metadata.parent_ref form a thread; a memory without one is a thread of its own, keyed
// by its id. The title is metadata.title of the thread's first memory, else the start of its content.
export async function listThreads(em: EntityManager, orgId: string, q: { namespace?: string | undefined; limit: number; offset: number }): Promise<ThreadSummary[]> {
  let namespaceFilter = sql``;
  if (q.namespace !== undefined) {
    const id = await namespaceIdOf(em, orgId, q.namespace);
    if (!id) return [];
    namespaceFilter = sql`and m.namespace_id = ${id}`;
  }
  const rows = await query(
    em,
    sql<{ parent_ref: string; namespace: string; count: string; first_at: string; last_at: string; title: string; has_chunks: boolean }>`
      with t as (
        select coalesce(m.metadata->>'parent_ref', m.id::text) as ref, m.id, m.namespace_id, m.content, m.metadata, m.created_at
          from memories m where m.org_id = ${orgId} and m.superseded_by is null ${namespaceFilter}
      )
      select ref as parent_ref,
             (array_agg(n.name order by t.created_at, t.id))[1] as namespace,
             count(*) as count, min(t.created_at) as first_at, max(t.created_at) as last_at,
             (array_agg(coalesce(t.metadata->>'title', left(t.content, ${TITLE_LENGTH})) order by t.created_at, t.id))[1] as title,
             bool_or(t.metadata ? 'chunk_index') as has_chunks
        from t join namespaces n on n.org_id = ${orgId} and n.id = t.namespace_id
       group by ref
       order by max(t.created_at) desc, ref
       limit ${q.limit} offset ${q.offset}`,
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Chunks in metadata.chunk_index order when present (numbers only), then by creation.
export async function getThread(em: EntityManager, orgId: string, ref: string): Promise<Thread> {
  const chunks = await query(
    em,
    sql<{ id: string; content: string; metadata: Record<string, unknown> }>`
      select id, content, metadata from memories
       where org_id = ${orgId} and superseded_by is null and metadata ? 'parent_ref' and metadata->>'parent_ref' = ${ref}
       order by case when jsonb_typeof(metadata->'chunk_index') = 'number' then (metadata->>'chunk_index')::numeric end asc nulls last, created_at, id`,
  );
  if (chunks.length > 0) return { parentRef: ref, chunks };
  if (UUID.test(ref)) {
    const single = await query(em, sql<{ id: string; content: string; metadata: Record<string, unknown> }>`select id, content, metadata from memories where org_id = ${orgId} and id = ${ref}`);
    if (single.length > 0) return { parentRef: ref, chunks: single };
  }
  throw notFound();
}
