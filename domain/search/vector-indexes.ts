import type { EntityManager } from '@mikro-orm/postgresql';
import { query, queryOne, sql } from '../sql.ts';
import { HALFVEC } from './semantic.ts';

// Orgs that hold many vectors get an HNSW index of their own: a partial index of memory_embeddings for the org's
// rows, beside the shared one (migrations/0017), with the same expression and parameters. The planner picks it by
// itself for a statement that names the org (every search binds its org id, and the driver's unnamed statements
// are planned with their values), and it is smaller, so cheaper, than the shared one. It keeps other tenants out
// of the org's searches: in the shared index a neighbour's dense cluster near a query made the scan read
// pgvector's max_scan_tuples (20,000) of the neighbour's vectors, find too few of the org's, and fall back to the
// exact scan, 100 ms and then 300 ms for an org of 128,000 (docs/performance.md, session 19). With its own index
// the same search took 5 ms. Smaller orgs stay in the shared index, where that fallback stays cheap (an exact scan
// of 10,000 memories costs about 25 ms), and the smallest are scored exactly (EXACT_SCAN_MAX).
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
  // Indexes to drop: left invalid by a build that failed, or of an org that has shrunk below half the threshold
  // (or was erased), so an org near the threshold does not gain and lose its index over and over.
  drop: string[];
}

export async function planVectorIndexes(em: EntityManager, minVectors: number): Promise<VectorIndexPlan> {
  const sizes = await query(
    em,
    sql<{ org_id: string; vectors: string }>`select org_id, sum(value) as vectors from counters
      where scope_id = org_id and name like 'vectors:%' group by org_id having sum(value) >= ${Math.ceil(minVectors / 2)}`,
  );
  const present = await query(
    em,
    sql<{ name: string; valid: boolean }>`select i.relname as name, x.indisvalid as valid from pg_index x join pg_class i on i.oid = x.indexrelid
      where x.indrelid = 'memory_embeddings'::regclass and starts_with(i.relname, ${PREFIX})`,
  ).then((rows) => rows.filter((r) => ORG_INDEX.test(r.name)));
  const valid = new Set(present.filter((p) => p.valid).map((p) => p.name));
  const kept = new Set(sizes.map((s) => orgIndexName(s.org_id)));
  return {
    build: sizes
      .filter((s) => Number(s.vectors) >= minVectors && !valid.has(orgIndexName(s.org_id)))
      .sort((a, b) => Number(b.vectors) - Number(a.vectors))
      .map((s) => s.org_id),
    drop: present.filter((p) => !p.valid || !kept.has(p.name)).map((p) => p.name),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Builds the org's index without blocking writes (CREATE INDEX CONCURRENTLY, which cannot run in a transaction and
// takes its settings from its own session: hence one pinned connection). An index of that name that is already
// valid is kept. A build that fails leaves an invalid index behind, which the next plan drops.
export async function buildOrgIndex(em: EntityManager, orgId: string): Promise<void> {
  if (!UUID.test(orgId)) throw new Error(`not an org id: ${orgId}`);
  const name = orgIndexName(orgId);
  await em.getKysely().connection().execute(async (db) => {
    await sql`set maintenance_work_mem = ${sql.lit(BUILD_MEMORY)}`.execute(db);
    try {
      await sql`create index concurrently if not exists ${sql.id(name)} on memory_embeddings
        using hnsw ((embedding::${HALFVEC}) halfvec_cosine_ops) with (m = 16, ef_construction = 64)
        where org_id = ${sql.lit(orgId.toLowerCase())}::uuid`.execute(db);
    } finally {
      await sql`reset maintenance_work_mem`.execute(db);
    }
  });
  if (!(await orgIndexReady(em, orgId))) throw new Error(`index ${name} exists but is not valid: the next plan drops and rebuilds it`);
}

export async function dropVectorIndex(em: EntityManager, name: string): Promise<void> {
  if (!ORG_INDEX.test(name)) throw new Error(`not an org's vector index: ${name}`);
  await query(em, sql`drop index concurrently if exists ${sql.id(name)}`);
}

// Whether the org's searches have an index of their own.
export async function orgIndexReady(em: EntityManager, orgId: string): Promise<boolean> {
  const row = await queryOne(em, sql<{ valid: boolean }>`select x.indisvalid as valid from pg_index x where x.indexrelid = to_regclass(${orgIndexName(orgId)})`);
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
