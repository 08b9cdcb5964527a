import type { FairSlots } from '../../domain/fair-slots.ts';
import { z } from 'zod';
import { createMemory } from '../../domain/memories/create.ts';
import { MAX_PROJECTS_PER_ORG } from '../../domain/store/namespaces.ts';
import { SaveBatcher } from '../../domain/memories/save-batch.ts';
import { deleteMemory } from '../../domain/memories/delete.ts';
import { memoryHistory } from '../../domain/memories/history.ts';
import { HISTORY_PAGE_MAX, LIST_LIMIT_MAX } from '../../domain/memories/limits.ts';
import { listMemories } from '../../domain/memories/list.ts';
import { getMemory } from '../../domain/memories/read.ts';
import { updateMemory } from '../../domain/memories/update.ts';
import { memoriesSaved, searches } from '../../infra/metrics.ts';
import { searchMemories } from '../../domain/search/search.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { intParam } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { upgradeUrlOf } from '../llm.ts';
import { auditActorField, auditTokenField } from '../events/schemas.ts';
import { hitJson, toFilters } from './schemas.ts';
import { memoryRecord, memorySchema } from '../../domain/store/model.ts';
import {
  contentRequired,
  createBody,
  idempotencyOf,
  idParams,
  memoryPatchOf,
  newMemoryOf,
  legacyQuery,
  listBody,
  patchable,
  patchBody,
} from './requests.ts';
import { getMemoriesIdHistory200, patchMemoriesId, postMemories, postMemories409 } from './descriptions.ts';

const historySchema = z.object({
  id: z.uuid(),
  edits: z.array(z.unknown()),
  events: z.array(
    z.object({
      id: z.uuid(),
      action: z.string(),
      actor_user_id: z.string().nullable(),
      actor_token: z.string().nullable(),
      created_at: epochMs,
      details: z.record(z.string(), z.unknown()),
      actor: auditActorField,
      token: auditTokenField,
    }),
  ),
  next_after: z.uuid().nullable(),
});
const historyJson = wireOf(historySchema);

export function memoryRoutes(deps: ApiDeps, slots: FairSlots): AnyRoute[] {
  const upgradeUrl = upgradeUrlOf(deps.config);
  const llm = { llm: deps.llm, escrowKey: deps.config.byokEscrowKey };
  const batcher = new SaveBatcher(() => deps.orm.em.fork());
  const patchRoute = (method: 'put' | 'patch') =>
    defineRoute({
      method,
      path: '/api/memories/:id',
      tag: 'memories',
      access: 'caller',
      summary: method === 'put' ? 'Update a memory (same as PATCH)' : 'Update a memory',
      description: patchMemoriesId,
      params: idParams,
      body: patchBody,
      responses: {
        200: { description: 'The updated memory', schema: memorySchema },
        404: { description: 'No such memory in this org' },
        409: { description: `\`project_limit\`: the move would make the org's project number ${MAX_PROJECTS_PER_ORG + 1}` },
      },
      handler: async (ctx, { params, body }) => {
        patchable.assert(body);
        ctx.body = memoryRecord(await updateMemory(ctx.state.em, callerOf(ctx), params.id, memoryPatchOf(body), { upgradeUrl, llm }));
      },
    });

  return [
    defineRoute({
      method: 'post',
      path: '/api/memories',
      tag: 'memories',
      access: 'caller',
      summary: 'Save a memory',
      description: postMemories,
      body: createBody,
      bodyError: contentRequired,
      responses: {
        201: { description: 'Created (or replayed)', schema: memorySchema },
        402: { description: '`memory_quota_exceeded` or `storage_quota_exceeded` (free plan), with quota and upgrade_url' },
        409: { description: postMemories409 },
        413: { description: '`memory_too_large` with max_bytes and received_bytes' },
      },
      handler: async (ctx, { body }) => {
        const created = await createMemory(ctx.state.em, callerOf(ctx), newMemoryOf(body), {
          upgradeUrl,
          batcher,
          llm,
          idempotency: idempotencyOf(ctx, body),
        });
        if (created.replayed) ctx.set('Idempotent-Replayed', 'true');
        else memoriesSaved.inc();
        ctx.status = 201;
        ctx.body = memoryRecord(created.memory);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/memories',
      tag: 'memories',
      access: 'caller',
      summary: 'List memories (legacy: a plain array); with q, BM25 search rows carrying score',
      query: legacyQuery,
      responses: {
        200: {
          description: 'Memories',
          schema: z.array(memorySchema.extend({ score: z.number().optional(), relevance: z.number().optional() })),
        },
      },
      handler: async (ctx, { query: q }) => {
        const { orgId } = callerOf(ctx);
        const filters = toFilters(q);
        if (q.q !== undefined) {
          searches.inc({ mode: 'lexical' });
          const request = { text: q.q, k: Math.min(q.offset + q.limit, LIST_LIMIT_MAX), mode: 'lexical' as const, filters };
          const { hits } = await slots.run(orgId, () => searchMemories(ctx.state.em, orgId, request));
          // The legacy shape: rows with score (and relevance), without found_by (always lexical here).
          ctx.body = hits.slice(q.offset, q.offset + q.limit).map((hit) => {
            const { found_by: _, ...row } = hitJson(hit);
            return row;
          });
          return;
        }
        const page = await listMemories(ctx.state.em, orgId, { ...filters, limit: q.limit, offset: q.offset, order: q.order });
        ctx.body = page.memories.map(memoryRecord);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/memories/list',
      tag: 'memories',
      access: 'caller',
      write: false,
      summary: 'List memories with filters in the body',
      body: listBody,
      responses: {
        200: {
          description: 'One page; total counts the same filter (null when the count was skipped for a very large result)',
          schema: z.object({
            memories: z.array(memorySchema),
            limit: z.number().int(),
            offset: z.number().int(),
            total: z.number().int().nullable(),
          }),
        },
      },
      handler: async (ctx, { body }) => {
        const page = await listMemories(ctx.state.em, callerOf(ctx).orgId, {
          ...toFilters(body),
          limit: body.limit,
          offset: body.offset,
          order: body.order,
        });
        ctx.body = { memories: page.memories.map(memoryRecord), limit: body.limit, offset: body.offset, total: page.total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/memories/:id',
      tag: 'memories',
      access: 'caller',
      summary: 'One memory',
      params: idParams,
      responses: { 200: { description: 'The memory', schema: memorySchema }, 404: { description: 'No such memory in this org' } },
      handler: async (ctx, { params }) => {
        ctx.body = memoryRecord(await getMemory(ctx.state.em, callerOf(ctx).orgId, params.id));
      },
    }),
    patchRoute('put'),
    patchRoute('patch'),
    defineRoute({
      method: 'delete',
      path: '/api/memories/:id',
      tag: 'memories',
      access: 'caller',
      summary: 'Delete a memory; repeating the call after success also answers 204',
      params: idParams,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'No such memory in this org' } },
      handler: async (ctx, { params }) => {
        await deleteMemory(ctx.state.em, callerOf(ctx), params.id);
        ctx.status = 204;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/memories/:id/history',
      tag: 'memories',
      access: 'caller',
      summary: "A memory's edit history and audit trail, a page of events at a time",
      params: idParams,
      query: z.object({
        limit: intParam(1, HISTORY_PAGE_MAX)
          .default(100)
          .meta({ description: `audit events a page holds (1-${HISTORY_PAGE_MAX}, default 100)` }),
        after: z.uuid().optional().meta({ description: "the next page: the previous page's next_after" }),
      }),
      responses: {
        200: {
          description: getMemoriesIdHistory200,
          schema: historySchema,
        },
      },
      handler: async (ctx, { params, query: page }) => {
        const h = await memoryHistory(ctx.state.em, callerOf(ctx).orgId, params.id, page);
        ctx.body = historyJson(h);
      },
    }),
  ];
}
