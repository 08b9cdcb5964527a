import { createHash } from 'node:crypto';
import { z } from 'zod';
import { batchUpdate } from '../../domain/memories/batch.ts';
import { createMemory } from '../../domain/memories/create.ts';
import { MAX_PROJECTS_PER_ORG } from '../../domain/store/namespaces.ts';
import { SaveBatcher } from '../../domain/memories/save-batch.ts';
import { deleteMemory } from '../../domain/memories/delete.ts';
import { memoryHistory } from '../../domain/memories/history.ts';
import { BATCH_UPDATE_MAX, BULK_SEARCH_MAX_QUERIES, LIST_LIMIT_MAX, LIST_OFFSET_MAX, SEARCH_K_MAX } from '../../domain/memories/limits.ts';
import { LIST_ORDERS, listMemories } from '../../domain/memories/list.ts';
import { getMemory } from '../../domain/memories/read.ts';
import { updateMemory } from '../../domain/memories/update.ts';
import { invalid } from '../../domain/errors.ts';
import pLimit from 'p-limit';
import { bulkSearchSlots, searchBulk } from '../../domain/search/bulk.ts';
import { memoriesSaved, searches } from '../../infra/metrics.ts';
import type { QueryVectors } from '../../domain/search/query-vectors.ts';
import { needsVector, searchMemories, SEARCH_MODES } from '../../domain/search/search.ts';
import { similarMemories } from '../../domain/search/similar.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { epochMs, epochMsParam, intParam, jsonObjectParam, patchGuard, repeatedParam } from '../http/schemas.ts';
import { upgradeUrlOf } from '../llm.ts';
import { filterFields, memoryJson, memorySchema, metadata, namespaceName, scoredMemorySchema, tags, toFilters } from './schemas.ts';

const idParams = z.object({ id: z.uuid() });

export const createBody = z.object({
  content: z.string(),
  namespace: namespaceName.optional(),
  tags: tags.optional(),
  source: z.string().trim().min(1).max(100).optional(),
  source_ref: z.string().max(500).nullable().optional(),
  metadata: metadata.optional(),
});

const patchFields = {
  content: z.string().optional(),
  tags: tags.optional(),
  namespace: namespaceName.optional(),
  metadata: metadata.optional().meta({ description: 'merged into the stored metadata; a key set to null is removed' }),
};
export const patchBody = z.object(patchFields);
const batchItem = z.object({ id: z.uuid(), ...patchFields });
const patchable = patchGuard(patchFields);

export const listBody = z.object({
  ...filterFields,
  limit: z.number().int().min(1).max(LIST_LIMIT_MAX).default(50),
  offset: z.number().int().min(0).max(LIST_OFFSET_MAX).default(0),
  order: z.enum(LIST_ORDERS).default('updated_desc'),
});

// tags=a&tags=b: the memory must carry all of them, as the body's `tags` asks elsewhere.
const tagsParam = repeatedParam(tags).optional().meta({ description: 'the memory must carry all of these tags (repeat the parameter: tags=a&tags=b)' });

const legacyQuery = z.object({
  q: z.string().trim().min(1).max(4000).optional().meta({ description: 'full-text BM25 query; rows then carry score, best first' }),
  namespace: namespaceName.optional(),
  limit: intParam(1, LIST_LIMIT_MAX).default(50),
  offset: intParam(0, LIST_OFFSET_MAX).default(0),
  created_after: epochMsParam.optional(),
  created_before: epochMsParam.optional(),
  updated_after: epochMsParam.optional(),
  updated_before: epochMsParam.optional(),
  metadata_filter: jsonObjectParam.optional(),
  tags: tagsParam,
  entity: z.uuid().optional(),
  order: z.enum(LIST_ORDERS).default('updated_desc'),
});

const searchFilters = {
  namespace: filterFields.namespace,
  tags: filterFields.tags,
  metadata_filter: filterFields.metadata_filter,
  created_after: filterFields.created_after,
  created_before: filterFields.created_before,
};
const searchMode = z
  .enum(SEARCH_MODES)
  .default('lexical')
  .meta({
    description:
      'lexical: BM25 over the words (the default); semantic: cosine similarity of embeddings, for questions in other words than the memory (a memory over 2,000 characters is also embedded in passages of about 900, up to about 86,000 characters, and scored by its best; with a local model, a question over 128 tokens, about 100 words, is embedded from its first and last 64); hybrid: both lists (100 deep each) fused by relative score: each list scaled to [0, 1] between its worst and best score, then summed with weights 0.4 (words) and 0.6 (meaning) (a list that missed a memory adds 0); its lexical list leaves out the words that only make a question (what, when, who, how, did, does, ...), reads a long question by its 32 rarest terms and, in a namespace, takes the BM25 statistics of that namespace rather than of the whole org (for a namespace of at most about 115 √N of the N memories of the org, e.g. 36,000 of 100,000 or 115,000 of 1,000,000; a larger one keeps the statistics of the org); in a thread (metadata.parent_ref), the two chunks after a memory of that list gain 0.2 and 0.1 of its score. Every filter applies in every mode.',
  });
export const searchBody = z.object({
  query: z.string().trim().min(1).max(4000),
  k: z.number().int().min(1).max(SEARCH_K_MAX).default(10),
  mode: searchMode,
  ...searchFilters,
});
const bulkBody = z.object({
  queries: z.array(z.string().trim().min(1).max(4000)).min(1).max(BULK_SEARCH_MAX_QUERIES),
  k: z.number().int().min(1).max(SEARCH_K_MAX).default(5),
  mode: searchMode,
  ...searchFilters,
});

export const similarQuery = z.object({
  k: intParam(1, SEARCH_K_MAX).default(10),
  namespace: namespaceName.optional(),
  tags: tagsParam,
  created_after: epochMsParam.optional(),
  created_before: epochMsParam.optional(),
  metadata_filter: jsonObjectParam.optional(),
});

const contentRequired = (issues: z.core.$ZodIssue[]) => (issues.some((i) => i.path[0] === 'content') ? 'content required' : undefined);
const requestHash = (body: unknown) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

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
        ctx.body = memoryJson(await updateMemory(ctx.state.em, callerOf(ctx), params.id, body, { upgradeUrl, llm }));
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
        409: { description: `\`idempotency_key_reused\`, or \`project_limit\`: the save names a new project and the org holds ${MAX_PROJECTS_PER_ORG} already` },
        413: { description: '`memory_too_large` with max_bytes and received_bytes' },
      },
      handler: async (ctx, { body }) => {
        const key = ctx.get('idempotency-key');
        if (key.length > 255) throw invalid('validation_failed', 'Idempotency-Key is limited to 255 characters');
        const created = await createMemory(
          ctx.state.em,
          callerOf(ctx),
          { content: body.content, namespace: body.namespace, tags: body.tags, source: body.source, sourceRef: body.source_ref, metadata: body.metadata },
          { upgradeUrl, batcher, llm, idempotency: key ? { key, requestHash: requestHash(body) } : undefined },
        );
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
          const hits = await searchMemories(ctx.state.em, orgId, { text: q.q, k: Math.min(q.offset + q.limit, LIST_LIMIT_MAX), mode: 'lexical', filters });
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
          schema: z.object({ memories: z.array(memorySchema), limit: z.number().int(), offset: z.number().int(), total: z.number().int().nullable() }),
        },
      },
      handler: async (ctx, { body }) => {
        const page = await listMemories(ctx.state.em, callerOf(ctx).orgId, { ...toFilters(body), limit: body.limit, offset: body.offset, order: body.order });
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
        503: { description: '`embeddings_unavailable`: semantic or hybrid, and no vector could be computed for the query (lexical still works). A query the org asked lately keeps its vector, and is answered even while the model is down.' },
      },
      handler: async (ctx, { body }) => {
        const { orgId } = callerOf(ctx);
        const vector = needsVector(body.mode) ? queries.of(orgId, [body.query]).then(([v]) => v!) : undefined;
        searches.inc({ mode: body.mode });
        const hits = await searchMemories(ctx.state.em, orgId, { text: body.query, k: body.k, mode: body.mode, filters: toFilters(body) }, vector);
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
        200: { description: 'One entry per query', schema: z.object({ results: z.array(z.object({ query: z.string(), hits: z.array(scoredMemorySchema) })) }) },
        503: { description: '`embeddings_unavailable`: semantic or hybrid, and no vector could be computed for the queries (the queries the org asked lately keep theirs)' },
      },
      handler: async (ctx, { body }) => {
        const { orgId } = callerOf(ctx);
        searches.inc({ mode: body.mode }, body.queries.length);
        const vectors = needsVector(body.mode) ? queries.of(orgId, body.queries) : undefined;
        const hits = await searchBulk(() => ctx.state.em.fork(), orgId, body.queries, { k: body.k, mode: body.mode, filters: toFilters(body), vectors, slots: bulkSlots });
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
        "The memory's own vector is the query (for a chunk of a thread, its vector with the chunks before it), so no model runs: the same scan and scores as a semantic search (cosine similarity; a copy of the text scores 1), with the memory itself left out. Filters: namespace, tags (repeated), metadata_filter (JSON), created_after, created_before. Superseded memories are left out of the hits.",
      params: idParams,
      query: similarQuery,
      responses: {
        200: { description: 'Hits', schema: z.object({ hits: z.array(scoredMemorySchema) }) },
        404: { description: 'No such memory in this org' },
        409: { description: '`embedding_pending`: the memory has no vector of the current model yet (it is embedded in the background, usually within seconds)' },
        503: { description: '`embeddings_unavailable`: this server has no embedding model' },
      },
      handler: async (ctx, { params, query: q }) => {
        searches.inc({ mode: 'similar' });
        const hits = await similarMemories(ctx.state.em, callerOf(ctx).orgId, deps.embedder?.model ?? null, params.id, q.k, toFilters(q));
        ctx.body = { hits: hits.map(memoryJson) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/memories/batch',
      tag: 'memories',
      access: 'caller',
      summary: 'Update up to 200 memories; one rate-limit slot',
      description: 'Each item has the single-update semantics. A bad row is reported in `failed` (for example `not found`) and does not stop the others.',
      body: z.object({ updates: z.array(z.record(z.string(), z.unknown())).min(1).max(BATCH_UPDATE_MAX) }),
      responses: {
        200: {
          description: 'Outcome per row',
          schema: z.object({ updated: z.number().int(), failed: z.array(z.object({ id: z.string().nullable(), error: z.string() })), results: z.array(memorySchema) }),
        },
      },
      handler: async (ctx, { body }) => {
        const valid = [];
        const failed: { id: string | null; error: string }[] = [];
        for (const raw of body.updates) {
          const item = batchItem.safeParse(raw);
          const id = typeof raw.id === 'string' ? raw.id : null;
          if (!item.success) failed.push({ id, error: item.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
          else if (patchable.isEmpty(item.data)) failed.push({ id, error: 'no patchable fields supplied' });
          else valid.push(item.data);
        }
        const outcome = await batchUpdate(ctx.state.em, callerOf(ctx), valid, { upgradeUrl, llm });
        failed.push(...outcome.failed);
        ctx.body = { updated: outcome.results.length, failed, results: outcome.results.map(memoryJson) };
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
      summary: "A memory's edit history and audit trail",
      params: idParams,
      responses: {
        200: {
          description: 'edits: metadata.history (the prior text is not kept); events: audit rows about this memory, oldest first',
          schema: z.object({
            id: z.uuid(),
            edits: z.array(z.unknown()),
            events: z.array(z.object({ id: z.uuid(), action: z.string(), actor_user_id: z.string().nullable(), actor_token: z.string().nullable(), created_at: epochMs, details: z.record(z.string(), z.unknown()) })),
          }),
        },
      },
      handler: async (ctx, { params }) => {
        const h = await memoryHistory(ctx.state.em, callerOf(ctx).orgId, params.id);
        ctx.body = {
          id: h.id,
          edits: h.edits,
          events: h.events.map((e) => ({ id: e.id, action: e.action, actor_user_id: e.actorUserId, actor_token: e.actorToken, created_at: e.createdAt, details: e.details })),
        };
      },
    }),
  ];
}
