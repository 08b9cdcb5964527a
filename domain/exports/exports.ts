import type { EntityManager } from '@mikro-orm/postgresql';
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { recordAudit } from '../audit/record.ts';
import { copyOut } from '../copy-out.ts';
import { invalid, notFound, rateLimited } from '../errors.ts';
import { newId } from '../ids.ts';
import { compileFilters, type MemoryFilters } from '../store/filters.ts';
import { MEMORIES_IN_NAMESPACES, MEMORY_COLUMNS, memoryRecord, memoryView, type MemoryRow, type MemoryView } from '../store/model.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { takeSlot } from '../ratelimit/take.ts';
import { query, queryOne, sql, toDate, toDateOrNull } from '../sql.ts';

export const EXPORT_JOB = 'memoryExport';
export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
const EXPORT_PAGE_SIZE = 1000;
const EXPORT_LIST_LIMIT = 100;
// The scopes and event time come last: the columns before them are the contract's, in its order.
const CSV_COLUMNS = [
  'id',
  'content',
  'namespace',
  'tags',
  'source',
  'source_ref',
  'metadata',
  'created_at',
  'updated_at',
  'user_id',
  'agent_id',
  'run_id',
  'occurred_at',
];

export interface ExportView {
  id: string;
  status: 'pending' | 'completed' | 'failed';
  format: ExportFormat;
  rowCount: number;
  error: string | null;
  filters: MemoryFilters;
  createdAt: number;
  completedAt: number | null;
}

// Exports an org may start in a rolling hour (0: no limit) are counted here, in the transaction that starts one, so
// that a refused or failed request spends nothing.
const EXPORT_WINDOW_SECONDS = 60 * 60;
async function spendExportSlot(tx: EntityManager, orgId: string, perHour: number): Promise<void> {
  if (perHour === 0) return;
  const slot = await takeSlot(tx, `export:${orgId}`, perHour, EXPORT_WINDOW_SECONDS);
  if (!slot.allowed) throw rateLimited('rate-limited', `at most ${perHour} exports per organization an hour`, slot.retryAfterSeconds);
}

export async function requestExport(
  em: EntityManager,
  caller: Caller,
  format: ExportFormat,
  filters: MemoryFilters,
  perHour: number,
): Promise<ExportView> {
  return em.transactional(async (tx) => {
    await spendExportSlot(tx, caller.orgId, perHour);
    const id = newId();
    const [row] = await query(
      tx,
      sql<{
        created_at: string;
      }>`insert into export_jobs (id, org_id, format, filters, created_at)
        values (${id}, ${caller.orgId}, ${format}, ${JSON.stringify(filters)}::jsonb, now()) returning created_at`,
    );
    await enqueueJobs(tx, [
      {
        orgId: caller.orgId,
        jobType: EXPORT_JOB,
        jobKey: `export-${id}`,
        args: [{ exportId: id }],
        description: `export the org's memories as ${format}`,
      },
    ]);
    await recordAudit(tx, { orgId: caller.orgId, action: 'memory.export', targetId: id, actor: actorOf(caller), details: { format } });
    return {
      id,
      status: 'pending',
      format,
      rowCount: 0,
      error: null,
      filters,
      createdAt: toDate(row!.created_at).getTime(),
      completedAt: null,
    };
  });
}

interface JobRow {
  id: string;
  org_id: string;
  status: ExportView['status'];
  format: ExportFormat;
  row_count: number;
  error: string | null;
  filters: MemoryFilters;
  created_at: string;
  completed_at: string | null;
}

const view = (r: JobRow): ExportView => ({
  id: r.id,
  status: r.status,
  format: r.format,
  rowCount: r.row_count,
  error: r.error,
  filters: r.filters,
  createdAt: toDate(r.created_at).getTime(),
  completedAt: toDateOrNull(r.completed_at)?.getTime() ?? null,
});

export async function getExport(em: EntityManager, orgId: string, id: string): Promise<ExportView> {
  const row = await queryOne(em, sql<JobRow>`select * from export_jobs where id = ${id} and org_id = ${orgId}`);
  if (!row) throw notFound('export', id);
  return view(row);
}

export async function listExports(em: EntityManager, orgId: string): Promise<ExportView[]> {
  const rows = await query(
    em,
    sql<JobRow>`select * from export_jobs where org_id = ${orgId} order by created_at desc, id desc limit ${EXPORT_LIST_LIMIT}`,
  );
  return rows.map(view);
}

// Where a finished file lies: its pages (the workflow writes pages 0, 1, 2, ... in order), and its size in bytes,
// known without reading it (octet_length of a stored text reads its header only).
export interface ExportExtent {
  pages: number;
  bytes: number;
}

export async function exportExtent(em: EntityManager, orgId: string, exportId: string): Promise<ExportExtent> {
  const row = await queryOne(
    em,
    sql<{
      pages: number;
      bytes: string;
    }>`select count(*)::int as pages, coalesce(sum(octet_length(data)), 0) as bytes from export_chunks
      where org_id = ${orgId} and export_id = ${exportId}`,
  );
  return { pages: row!.pages, bytes: Number(row!.bytes) };
}

// The finished file's bytes in order: the download, and the inline payload of a small file. Each page is read whole,
// as the socket's buffers and never as a string, by a COPY of its own (copyOut), while the page before it is sent: a
// connection is held for the time PostgreSQL takes to send one page, so a client that reads slowly holds two pages of
// memory and no connection of the pool.
export function exportFile(em: EntityManager, orgId: string, exportId: string, { pages }: ExportExtent): Readable {
  const where = sql`org_id = ${sql.lit(orgId)}::uuid and export_id = ${sql.lit(exportId)}::uuid`;
  const read = async (seq: number): Promise<Buffer[]> =>
    (await copyOut(em, sql`select data from export_chunks where ${where} and seq = ${sql.lit(seq)}`)).toArray();
  async function* bytes() {
    let next = pages > 0 ? read(0) : null;
    for (let seq = 1; next; seq++) {
      const page = await next;
      next = seq < pages ? read(seq) : null;
      // Should the client leave before it is sent, its outcome concerns nobody.
      next?.catch(() => undefined);
      yield* page;
    }
  }
  return Readable.from(bytes(), { objectMode: false });
}

function render(format: ExportFormat, memories: MemoryView[], header: boolean): string {
  if (format === 'ndjson') return memories.map((m) => `${JSON.stringify(memoryRecord(m))}\n`).join('');
  const rows = memories.map((m) => {
    const r = memoryRecord(m);
    return [
      r.id,
      r.content,
      r.namespace,
      JSON.stringify(r.tags),
      r.source,
      r.source_ref ?? '',
      JSON.stringify(r.metadata),
      r.created_at,
      r.updated_at,
      m.userId ?? '',
      m.agentId ?? '',
      m.runId ?? '',
      r.occurred_at,
    ];
  });
  return stringify(rows, { header, columns: CSV_COLUMNS });
}

export interface PageCursor {
  seq: number;
  afterCreatedAt: number | null;
  afterId: string | null;
}

// What a page written leaves: the next cursor (null when done), and whose export it is (null: no such export pending).
export interface PageWritten {
  next: PageCursor | null;
  orgId: string | null;
}

// Writes the next page of the export (keyset order by creation, then id) as one chunk and counts its
// rows, in one transaction; idempotent for a given cursor.
export async function exportPage(em: EntityManager, exportId: string, cursor: PageCursor): Promise<PageWritten> {
  return em.transactional(async (tx): Promise<PageWritten> => {
    // By id alone (export_jobs_id_idx): the workflow carries only the id. The org's key from here on.
    const job = await queryOne(tx, sql<JobRow>`select * from export_jobs where id = ${exportId} for update`);
    if (!job || job.status !== 'pending') return { next: null, orgId: null };
    let filters: Awaited<ReturnType<typeof compileFilters>>;
    try {
      filters = await compileFilters(tx, job.org_id, job.filters);
    } catch (err) {
      throw invalid('invalid_export_filters', `the stored filters cannot be applied: ${String(err)}`);
    }
    if (!filters.satisfiable) return { next: null, orgId: job.org_id };
    const after =
      cursor.afterCreatedAt === null
        ? sql`true`
        : sql`(m.created_at, m.id) > (${new Date(cursor.afterCreatedAt).toISOString()}::timestamptz, ${cursor.afterId}::uuid)`;
    const rows = await query(
      tx,
      sql<MemoryRow>`select ${MEMORY_COLUMNS} from ${MEMORIES_IN_NAMESPACES}
          where ${filters.where} and ${after} order by m.created_at, m.id limit ${EXPORT_PAGE_SIZE}`,
    );
    if (rows.length === 0 && cursor.seq > 0) return { next: null, orgId: job.org_id };
    const memories = rows.map(memoryView);
    await query(
      tx,
      sql`insert into export_chunks (org_id, export_id, seq, data)
        values (${job.org_id}, ${exportId}, ${cursor.seq}, ${render(job.format, memories, cursor.seq === 0)})
          on conflict (org_id, export_id, seq) do nothing`,
    );
    // Pages before this one were full, so the count is exact; the dashboard polls it while the export runs.
    await query(
      tx,
      sql`update export_jobs set row_count = ${cursor.seq * EXPORT_PAGE_SIZE + rows.length}
        where org_id = ${job.org_id} and id = ${exportId}`,
    );
    if (rows.length < EXPORT_PAGE_SIZE) return { next: null, orgId: job.org_id };
    const last = memories[memories.length - 1]!;
    return { next: { seq: cursor.seq + 1, afterCreatedAt: last.createdAt, afterId: last.id }, orgId: job.org_id };
  });
}

export async function finishExport(em: EntityManager, exportId: string, error: string | null): Promise<void> {
  await query(
    em,
    sql`update export_jobs set status = ${error ? 'failed' : 'completed'}, error = ${error}, completed_at = now()
      where id = ${exportId} and status = 'pending'`,
  );
}
