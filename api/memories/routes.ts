import { z } from 'zod';
import { createMemory } from '../../domain/memories/create.ts';
import { MAX_PROJECTS_PER_ORG } from '../../domain/store/namespaces.ts';
import { SaveBatcher } from '../../domain/memories/save-batch.ts';
import { deleteMemory } from '../../domain/memories/delete.ts';
import { memoryHistory } from '../../domain/memories/history.ts';
import { HISTORY_ENTRIES_KEPT, HISTORY_PAGE_MAX, LIST_LIMIT_MAX } from '../../domain/memories/limits.ts';
import { listMemories } from '../../domain/memories/list.ts';
import { getMemory } from '../../domain/memories/read.ts';
import { updateMemory } from '../../domain/memories/update.ts';
import pLimit from 'p-limit';
import { bulkSearchSlots, searchBulk } from '../../domain/search/bulk.ts';
import { memoriesSaved, searches } from '../../infra/metrics.ts';
import type { QueryVectors } from '../../domain/search/query-vectors.ts';
import { needsVector, searchMemories } from '../../domain/search/search.ts';
import { similarMemories } from '../../domain/search/similar.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { epochMs, intParam } from '../http/schemas.ts';
import { upgradeUrlOf } from '../llm.ts';
import { memoryJson, memorySchema, scoredMemorySchema, toFilters } from './schemas.ts';
import {
  bulkBody,
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
  searchBody,
  similarQuery,
} from './requests.ts';

export function memoryRoutes(deps: ApiDeps, queries: QueryVectors): AnyRoute[] {
  const upgradeUrl = upgradeUrlOf(deps.config);
  const llm = { llm: deps.llm, escrowKey: deps.config.byokEscrowKey };
  const batcher = new SaveBatcher(() => deps.orm.em.fork());
  const bulkSlots = pLimit(bulkSearchSlots(deps.config.DATABASE_POOL_MAX));
  const patchRoute = (method: 'put' | 'patch') =>
    defineRoute({
      method,
      path: '/api/memories/:id',
      tag: 'memories',
      access: 'caller',
      summary: method === 'put' ? 'Update a memory (same as PATCH)' : 'Update a memory',
      description:
        'Partial update: content (a change appends to metadata.history and is re-indexed at once), tags (replaced), namespace (moved; created if missing), metadata (merged; null removes a key). Fires memory.updated.',
      params: idParams,
      body: patchBody,
      responses: {
        200: { description: 'The updated memory', schema: memorySchema },
        404: { description: 'No such memory in this org' },
        409: { description: `\`project_limit\`: the move would make the org's project number ${MAX_PROJECTS_PER_ORG + 1}` },
      },
      handler: async (ctx, { params, body }) => {
        patchable.assert(body);
        ctx.body = memoryJson(await updateMemory(ctx.state.em, callerOf(ctx), params.id, memoryPatchOf(body), { upgradeUrl, llm }));
      },
    });

  return [
    defineRoute({
      method: 'post',
      path: '/api/memories',
      tag: 'memories',
      access: 'caller',
      summary: 'Save a memory',
      description:
        'Secrets in content are redacted before storage (metadata.redacted_count/redacted_kinds). Searchable as soon as the 201 is sent. With an `Idempotency-Key` header, a repeat of the same request within 24 hours returns the first answer (header `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is 409 `idempotency_key_reused`.',
      body: createBody,
      bodyError: contentRequired,
      responses: {
        201: { description: 'Created (or replayed)', schema: memorySchema },
        402: { description: '`memory_quota_exceeded` or `storage_quota_exceeded` (free plan), with quota and upgrade_url' },
        409: {
          description: `\`idempotency_key_reused\`, or \`project_limit\`: the save names a new project and the org holds ${MAX_PROJECTS_PER_ORG} already`,
        },
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
        ctx.body = memoryJson(created.memory);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/memories',
      tag: 'memories',
      access: 'caller',
      summary: 'List memories (legacy: a plain array); with q, BM25 search rows carrying score',
      query: legacyQuery,
      responses: { 200: { description: 'Memories', schema: z.array(memorySchema.extend({ score: z.number().optional() })) } },
      handler: async (ctx, { query: q }) => {
        const { orgId } = callerOf(ctx);
        const filters = toFilters(q);
        if (q.q !== undefined) {
          searches.inc({ mode: 'lexical' });
          const hits = await searchMemories(ctx.state.em, orgId, {
            text: q.q,
            k: Math.min(q.offset + q.limit, LIST_LIMIT_MAX),
            mode: 'lexical',
            filters,
          });
          // The legacy shape: rows with score, without found_by (always lexical here).
          ctx.body = hits.slice(q.offset, q.offset + q.limit).map(({ foundBy: _, ...hit }) => memoryJson(hit));
          return;
        }
        const page = await listMemories(ctx.state.em, orgId, { ...filters, limit: q.limit, offset: q.offset, order: q.order });
        ctx.body = page.memories.map(memoryJson);
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
        ctx.body = { memories: page.memories.map(memoryJson), limit: body.limit, offset: body.offset, total: page.total };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/memories/search',
      tag: 'memories',
      access: 'caller',
      write: false,
      summary: 'Search by words (BM25), by meaning, or both; best first',
      description:
        'A memory is found lexically from the moment its save answers, and semantically once its embedding is computed in the background (usually well under a second; GET /api/memories/embeddings shows the backlog). A memory in a thread (metadata.parent_ref, ordered by metadata.chunk_index) is found by meaning with the two chunks before it as its context, so a reply is found by what it answers.',
      body: searchBody,
      responses: {
        200: { description: 'Hits', schema: z.object({ hits: z.array(scoredMemorySchema) }) },
        503: {
          description:
            '`embeddings_unavailable`: semantic or hybrid, and no vector could be computed for the query (lexical still works). A query the org asked lately keeps its vector, and is answered even while the model is down.',
        },
      },
      handler: async (ctx, { body }) => {
        const { orgId } = callerOf(ctx);
        const vector = needsVector(body.mode) ? queries.of(orgId, [body.query]).then(([v]) => v!) : undefined;
        searches.inc({ mode: body.mode });
        const hits = await searchMemories(
          ctx.state.em,
          orgId,
          { text: body.query, k: body.k, mode: body.mode, filters: toFilters(body) },
          vector,
        );
        ctx.body = { hits: hits.map(memoryJson) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/memories/search/bulk',
      tag: 'memories',
      access: 'caller',
      write: false,
      summary: 'Up to 25 searches in one call (any mode); results in query order',
      body: bulkBody,
      responses: {
        200: {
          description: 'One entry per query',
          schema: z.object({ results: z.array(z.object({ query: z.string(), hits: z.array(scoredMemorySchema) })) }),
        },
        503: {
          description:
            '`embeddings_unavailable`: semantic or hybrid, and no vector could be computed for the queries (the queries the org asked lately keep theirs)',
        },
      },
      handler: async (ctx, { body }) => {
        const { orgId } = callerOf(ctx);
        searches.inc({ mode: body.mode }, body.queries.length);
        const vectors = needsVector(body.mode) ? queries.of(orgId, body.queries) : undefined;
        const hits = await searchBulk(() => ctx.state.em.fork(), orgId, body.queries, {
          k: body.k,
          mode: body.mode,
          filters: toFilters(body),
          vectors,
          slots: bulkSlots,
        });
        ctx.body = { results: body.queries.map((query, i) => ({ query, hits: hits[i]!.map(memoryJson) })) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/memories/:id/similar',
      tag: 'memories',
      access: 'caller',
      summary: 'Memories nearest in meaning to this one, best first',
      description:
        "The memory's own vector is the query (for a chunk of a thread, its vector with the chunks before it), so no model runs: the same scan and scores as a semantic search (cosine similarity; a copy of the text scores 1), with the memory itself left out. Filters: namespace, tags (repeated), metadata_filter (JSON), created_after, created_before, occurred_after, occurred_before, user_id, agent_id, run_id. Superseded memories are left out of the hits.",
      params: idParams,
      query: similarQuery,
      responses: {
        200: { description: 'Hits', schema: z.object({ hits: z.array(scoredMemorySchema) }) },
        404: { description: 'No such memory in this org' },
        409: {
          description:
            '`embedding_pending`: the memory has no vector of the current model yet (it is embedded in the background, usually within seconds)',
        },
        503: { description: '`embeddings_unavailable`: this server has no embedding model' },
      },
      handler: async (ctx, { params, query: q }) => {
        searches.inc({ mode: 'similar' });
        const hits = await similarMemories(ctx.state.em, callerOf(ctx).orgId, deps.embedder?.model ?? null, params.id, q.k, toFilters(q));
        ctx.body = { hits: hits.map(memoryJson) };
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
        ctx.body = memoryJson(await getMemory(ctx.state.em, callerOf(ctx).orgId, params.id));
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
          description: `edits: metadata.history, the latest ${HISTORY_ENTRIES_KEPT} content edits (the prior text is not kept); events: a page of the audit rows about this memory, oldest first; next_after: where the next page starts (null on the last)`,
          schema: z.object({
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
              }),
            ),
            next_after: z.uuid().nullable(),
          }),
        },
      },
      handler: async (ctx, { params, query: page }) => {
        const h = await memoryHistory(ctx.state.em, callerOf(ctx).orgId, params.id, page);
        ctx.body = {
          id: h.id,
          edits: h.edits,
          events: h.events.map((e) => ({
            id: e.id,
            action: e.action,
            actor_user_id: e.actorUserId,
            actor_token: e.actorToken,
            created_at: e.createdAt,
            details: e.details,
          })),
          next_after: h.nextAfter,
        };
      },
    }),
  ];
}
