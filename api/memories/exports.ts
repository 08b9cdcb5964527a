import { text } from 'node:stream/consumers';
import { z } from 'zod';
import {
  EXPORT_FORMATS,
  exportExtent,
  exportFile,
  getExport,
  listExports,
  requestExport,
  type ExportView,
} from '../../domain/exports/exports.ts';
import { AppError } from '../../domain/errors.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { filterFields, filterInputOf, toFilters } from './schemas.ts';
import { getMemoriesExportsId, postMemoriesExports } from './descriptions.ts';

const exportSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(['pending', 'completed', 'failed']),
    format: z.enum(EXPORT_FORMATS),
    row_count: z.number().int(),
    error: z.string().nullable(),
    filters: z.record(z.string(), z.unknown()),
    download_url: z.string().nullable(),
    created_at: epochMs,
    completed_at: epochMs.nullable(),
  })
  .meta({ id: 'ExportJob' });
const exportJson = wireOf(exportSchema);

const CONTENT_TYPES = { ndjson: 'application/x-ndjson; charset=utf-8', csv: 'text/csv; charset=utf-8' } as const;

export function exportRoutes(deps: ApiDeps): AnyRoute[] {
  // The filters as the request spelled them (the domain stores its own spelling).
  const json = (e: ExportView) =>
    exportJson({
      ...e,
      filters: filterInputOf(e.filters),
      downloadUrl: e.status === 'completed' ? `${deps.config.publicBaseUrl}/api/memories/exports/${e.id}/download` : null,
    });
  const params = z.object({ id: z.uuid() });
  return [
    defineRoute({
      method: 'post',
      path: '/api/memories/exports',
      tag: 'exports',
      access: 'caller',
      summary: 'Start an export of memories (ndjson or csv) with the list filters; answers 202 with the pending job',
      description: postMemoriesExports(deps.config.EXPORTS_PER_ORG_PER_HOUR),
      body: z.object({ format: z.enum(EXPORT_FORMATS), filters: z.object(filterFields).optional() }),
      responses: { 202: { description: 'Pending job', schema: exportSchema } },
      handler: async (ctx, { body }) => {
        const filters = body.filters ? toFilters(body.filters) : {};
        const job = await requestExport(ctx.state.em, callerOf(ctx), body.format, filters, deps.config.EXPORTS_PER_ORG_PER_HOUR);
        ctx.status = 202;
        ctx.body = json(job);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/memories/exports',
      tag: 'exports',
      access: 'caller',
      summary: 'The 100 most recent export jobs, without payload',
      responses: { 200: { description: 'Jobs', schema: z.object({ exports: z.array(exportSchema) }) } },
      handler: async (ctx) => {
        ctx.body = { exports: (await listExports(ctx.state.em, callerOf(ctx).orgId)).map(json) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/memories/exports/:id',
      tag: 'exports',
      access: 'caller',
      summary: 'One export job, with the inline payload once completed (up to a size; the file itself at download_url)',
      description: getMemoriesExportsId(deps.config.EXPORT_INLINE_MAX_BYTES),
      params,
      responses: {
        200: {
          description: 'The job',
          schema: exportSchema.extend({
            payload: z
              .string()
              .nullable()
              .meta({ description: 'the file inline once completed, or null above the inline limit (see download_url)' }),
            size_bytes: z.number().int().nullable().meta({ description: "the finished file's size in bytes; null until completed" }),
          }),
        },
        404: { description: 'Not in this org' },
      },
      handler: async (ctx, { params: p }) => {
        const job = await getExport(ctx.state.em, callerOf(ctx).orgId, p.id);
        let payload: string | null = null;
        let size: number | null = null;
        if (job.status === 'completed') {
          const extent = await exportExtent(ctx.state.em, callerOf(ctx).orgId, job.id);
          size = extent.bytes;
          if (size <= deps.config.EXPORT_INLINE_MAX_BYTES)
            payload = await text(exportFile(ctx.state.em, callerOf(ctx).orgId, job.id, extent));
        }
        ctx.body = { ...json(job), payload, size_bytes: size };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/memories/exports/:id/download',
      tag: 'exports',
      access: 'caller',
      summary: 'The finished export as a file, streamed, with its Content-Length',
      params,
      responses: {
        200: { description: 'The file (text/csv or application/x-ndjson)' },
        404: { description: 'Not in this org' },
        409: { description: '`export_not_ready`' },
      },
      handler: async (ctx, { params: p }) => {
        const job = await getExport(ctx.state.em, callerOf(ctx).orgId, p.id);
        if (job.status !== 'completed') throw new AppError('conflict', 'export_not_ready', `the export is ${job.status}`);
        ctx.type = CONTENT_TYPES[job.format];
        ctx.set('Content-Disposition', `attachment; filename="memories-${job.id}.${job.format}"`);
        // Its length is known before the first byte: a client can show progress and tell a cut download.
        const extent = await exportExtent(ctx.state.em, callerOf(ctx).orgId, job.id);
        ctx.body = exportFile(ctx.state.em, callerOf(ctx).orgId, job.id, extent);
        ctx.length = extent.bytes;
      },
    }),
  ];
}
