import type { EntityManager } from '@mikro-orm/postgresql';
import { EMBEDDING_DIMENSIONS } from './embedder.ts';
import { isUuid } from '../ids.ts';
import { query, queryOne, sql } from '../sql.ts';

// The type of the HNSW indexes' expression (migrations/0017 and 0019, and the orgs' own below): a query must cast
// to exactly this to use them.
export const HALFVEC = sql.raw(`halfvec(${EMBEDDING_DIMENSIONS})`);

// Orgs that hold many vectors get an HNSW index of their own: a partial index of memory_embeddings over the org's
// rows, with the shared index's expression and parameters. The planner picks it by itself for a statement that
// names the org (every search binds its org id, and the driver's unnamed statements are planned with their
// values), and it is smaller, so cheaper, than the shared one. It keeps other tenants out of the org's searches:
// in the shared index a neighbour's dense cluster near a query made the scan read pgvector's max_scan_tuples
// of the neighbour's vectors, find too few of the org's, and fall back to the exact scan, slow in a large org.
// Once the index is built, the org's rows are marked `own_index` and leave the shared index (a partial index over
// the other rows, migrations/0019), so each vector is kept in one HNSW graph; the curator marks the vectors it
// writes for such an org at once (vectorsWrite). Smaller orgs stay in the shared index, but their searches score
// their own rows instead while those are few (ORG_SCAN_ROWS, domain/search/semantic.ts).
//
// These indexes are the schema's one part not made by a migration: which orgs have one is data. Their names are
// derived from the org id, so the catalog is the only record of them. The vector-indexes workflow keeps them in
// step with the counters (planVectorIndexes, then buildOrgIndex and dropVectorIndex).

const PREFIX = 'memory_embeddings_hnsw_';
export const orgIndexName = (orgId: string): string => `${PREFIX}${orgId.replaceAll('-', '').toLowerCase()}`;
// Only names of this exact shape are the org indexes this module may drop (memory_embeddings has others).
const ORG_INDEX = /^memory_embeddings_hnsw_[0-9a-f]{32}$/;

// Memory for the build (PostgreSQL's default is 64 MB): the graph of an org of 128,000 vectors takes about 150 MB,
// and a build whose graph outgrows it goes on far more slowly. One build runs at a time (the workflow's), on one
// connection, and the setting is reset before the connection goes back to the pool.
const BUILD_MEMORY = '512MB';

export interface VectorIndexPlan {
  // Orgs to give their own index, largest first.
  build: string[];
  // Indexes to drop: left invalid by a build that failed, or of an org that no longer holds any vector (erased, or
  // all its memories deleted). An org that shrinks keeps its index: its vectors are in no other.
  drop: string[];
}

export async function planVectorIndexes(em: EntityManager, minVectors: number): Promise<VectorIndexPlan> {
  const present = await query(
    em,
    sql<{
      name: string;
      valid: boolean;
    }>`select i.relname as name, x.indisvalid as valid from pg_index x join pg_class i on i.oid = x.indexrelid
      where x.indrelid = 'memory_embeddings'::regclass and starts_with(i.relname, ${PREFIX})`,
  ).then((rows) => rows.filter((r) => ORG_INDEX.test(r.name)));
  const indexed = present.map((p) => orgOfIndex(p.name));
  const sizes = await query(
    em,
    sql<{ org_id: string; vectors: string }>`select org_id, sum(value) as vectors from counters
      where scope_id = org_id and name like 'vectors:%' group by org_id
      having sum(value) >= ${minVectors} or org_id = any(${indexed}::uuid[])`,
  );
  const holding = new Set(sizes.filter((s) => Number(s.vectors) > 0).map((s) => orgIndexName(s.org_id)));
  const valid = new Set(present.filter((p) => p.valid).map((p) => p.name));
  // Orgs with their own index and rows still in the shared one: a move cut short (retries exhausted) is finished.
  const unmoved = new Set(
    (
      await query(
        em,
        sql<{ org_id: string }>`select o as org_id from unnest(${indexed}::uuid[]) o
      where exists (select 1 from memory_embeddings e where e.org_id = o and not e.own_index)`,
      )
    ).map((r) => orgIndexName(r.org_id)),
  );
  return {
    build: sizes
      .filter((s) => Number(s.vectors) >= minVectors && (!valid.has(orgIndexName(s.org_id)) || unmoved.has(orgIndexName(s.org_id))))
      .sort((a, b) => Number(b.vectors) - Number(a.vectors))
      .map((s) => s.org_id),
    drop: present.filter((p) => !p.valid || !holding.has(p.name)).map((p) => p.name),
  };
}

const orgOfIndex = (name: string): string => {
  const hex = name.slice(PREFIX.length);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

// Builds the org's index without blocking writes (CREATE INDEX CONCURRENTLY, which cannot run in a transaction and
// takes its settings from its own session: hence one pinned connection), then moves the org's rows out of the
// shared index. An index of that name that is already valid is kept, so a build that failed while moving rows
// finishes on its next attempt. A build that fails leaves an invalid index behind, which the next plan drops.
export async function buildOrgIndex(em: EntityManager, orgId: string, onBatch: (moved: number) => void = () => {}): Promise<void> {
  if (!isUuid(orgId)) throw new Error(`not an org id: ${orgId}`);
  const name = orgIndexName(orgId);
  await em
    .getKysely()
    .connection()
    .execute(async (db) => {
      await sql`set maintenance_work_mem = ${sql.lit(BUILD_MEMORY)}`.execute(db);
      // A large org's build takes minutes, past the worker's statement deadline: the activity's heartbeat bounds it.
      await sql`set statement_timeout = 0`.execute(db);
      try {
        await sql`create index concurrently if not exists ${sql.id(name)} on memory_embeddings
        using hnsw ((embedding::${HALFVEC}) halfvec_cosine_ops) with (m = 16, ef_construction = 64)
        where org_id = ${sql.lit(orgId.toLowerCase())}::uuid`.execute(db);
      } finally {
        await sql`reset maintenance_work_mem`.execute(db);
        await sql`reset statement_timeout`.execute(db);
      }
    });
  if (!(await orgIndexReady(em, orgId))) throw new Error(`index ${name} exists but is not valid: the next plan drops and rebuilds it`);
  await markOwnIndex(em, orgId, true, onBatch);
}

// Drops the index, then hands whatever rows of its org it served back to the shared index.
export async function dropVectorIndex(em: EntityManager, name: string, onBatch: (moved: number) => void = () => {}): Promise<void> {
  if (!ORG_INDEX.test(name)) throw new Error(`not an org's vector index: ${name}`);
  await query(em, sql`drop index concurrently if exists ${sql.id(name)}`);
  await markOwnIndex(em, orgOfIndex(name), false, onBatch);
}

// Rows marked per statement: each moved row is inserted into the HNSW index that now serves it (2-5 ms a row on
// the benchmark's dense corpus), so a batch stays a few seconds long.
const MARK_BATCH = 1000;

// Marks every row of the org as served by its own index (true) or by the shared one (false), batch by batch in
// key order (a batch's memories with all their passages). The rows that the curator writes meanwhile are marked
// already (vectorsWrite).
async function markOwnIndex(em: EntityManager, orgId: string, own: boolean, onBatch: (moved: number) => void = () => {}): Promise<number> {
  let cursor = '00000000-0000-0000-0000-000000000000';
  let total = 0;
  for (;;) {
    const row = await queryOne(
      em,
      sql<{ last: string | null; moved: number }>`with batch as (
          select memory_id from memory_embeddings where org_id = ${orgId} and memory_id > ${cursor} and passage = 0
          order by memory_id limit ${MARK_BATCH}),
        moved as (
          update memory_embeddings set own_index = ${own}
           where org_id = ${orgId} and memory_id = any(array(select memory_id from batch)) and own_index <> ${own} returning 1)
        select (select max(memory_id::text) from batch) as last, (select count(*)::int from moved) as moved`,
    );
    if (!row?.last) return total;
    total += row.moved;
    onBatch(total);
    cursor = row.last;
  }
}

// Whether the org's own index serves the vectors written for it now (in SQL, for the statement that writes them).
export const ownIndexServes = (orgId: string) =>
  sql<boolean>`coalesce((select x.indisvalid from pg_index x where x.indexrelid = to_regclass(${orgIndexName(orgId)})), false)`;

// Whether the org's searches have an index of their own.
export async function orgIndexReady(em: EntityManager, orgId: string): Promise<boolean> {
  const row = await queryOne(em, sql<{ valid: boolean }>`select ${ownIndexServes(orgId)} as valid`);
  return row?.valid ?? false;
}

// How far a build has come, from PostgreSQL's progress view (phase, and tuples done of total), for the heartbeat.
export async function buildProgress(em: EntityManager, orgId: string): Promise<{ phase: string; done: number; total: number } | null> {
  const row = await queryOne(
    em,
    sql<{ phase: string; done: string; total: string }>`select p.phase, p.tuples_done as done, p.tuples_total as total
      from pg_stat_progress_create_index p join pg_class i on i.oid = p.index_relid where i.relname = ${orgIndexName(orgId)}`,
  );
  return row ? { phase: row.phase, done: Number(row.done), total: Number(row.total) } : null;
}
