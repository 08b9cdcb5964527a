import type { FairSlots } from '../../domain/fair-slots.ts';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { AppError, invalid } from '../../domain/errors.ts';
import { batchUpdate } from '../../domain/memories/batch.ts';
import { captureConversation } from '../../domain/conversations/capture.ts';
import { requestDeletion } from '../../domain/memories/delete-by-filter.ts';
import { deleteMemory } from '../../domain/memories/delete.ts';
import { memoryHistory } from '../../domain/memories/history.ts';
import { HISTORY_PAGE_MAX } from '../../domain/memories/limits.ts';
import { listMemories } from '../../domain/memories/list.ts';
import { getMemory } from '../../domain/memories/read.ts';
import { updateMemory } from '../../domain/memories/update.ts';
import type { QueryVectors } from '../../domain/search/query-vectors.ts';
import { freshVectors } from '../../domain/search/fresh.ts';
import { searchMemories } from '../../domain/search/search.ts';
import type { MemoryFilters } from '../../domain/store/filters.ts';
import type { MemoryView } from '../../domain/store/model.ts';
import { DEFAULT_NAMESPACE } from '../../domain/store/namespaces.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, ignoringUnknownFields, type AnyRoute } from '../http/route.ts';
import { upgradeUrlOf } from '../llm.ts';
import { conversationMessage } from '../conversations/requests.ts';
import { filterExpression, metadata, namespaceName, scopeFields } from '../memories/schemas.ts';
import { BATCH_CREATE_MAX } from '../../domain/memories/limits.ts';
import { MAX_EPOCH_MS } from '../../domain/store/instants.ts';

// A drop-in for mem0's own clients (docs/mem0-migration.md): the mem0 Platform's REST shapes under /compat/mem0, so
// that mem0's official clients (PyPI mem0ai 2.2, npm mem0ai 3.x), pointed at that prefix as their host with one of
// our API tokens, work unchanged. Each route is a thin translation onto the service's own operations.
const MEM0_PREFIX = '/compat/mem0';
const TAG = 'mem0 compatibility';

const notSupported = (what: string) =>
  invalid('not_supported', `${what} is not offered by this service (docs/mem0-migration.md)`, {
    detail: `${what} is not offered by this service`,
  });

// mem0's field names in its filter grammar, renamed to ours (the grammar is otherwise the same).
const FIELD_NAMES: Record<string, string> = {
  app_id: 'namespace',
  categories: 'tags',
  memory_ids: 'id',
  timestamp: 'occurred_at',
  keywords: 'content',
};
function ourFilters(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ourFilters);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      if (key === 'metadata') return [key, inner];
      return [FIELD_NAMES[key] ?? key, ['AND', 'OR', 'NOT'].includes(key) ? ourFilters(inner) : inner];
    }),
  );
}
const mem0Filters = z
  .record(z.string(), z.unknown())
  .transform((f) => ourFilters(f) as Record<string, unknown>)
  .pipe(filterExpression)
  .meta({
    description:
      "mem0's filter grammar (AND, OR, NOT; user_id, agent_id, app_id (a project here), run_id, created_at, updated_at, " +
      'timestamp, categories (tags), keywords (content), memory_ids, metadata)',
  });

const iso = (ms: number) => new Date(ms).toISOString();
// A memory as mem0's Platform shows it.
const mem0Memory = (m: MemoryView) => ({
  id: m.id,
  memory: m.content,
  user_id: m.userId,
  agent_id: m.agentId,
  app_id: m.namespace,
  run_id: m.runId,
  hash: createHash('md5').update(m.content).digest('hex'),
  metadata: m.metadata,
  categories: m.tags,
  created_at: iso(m.createdAt),
  updated_at: iso(m.updatedAt),
  ...(m.score !== undefined ? { score: m.score } : {}),
});
const mem0MemorySchema = z.record(z.string(), z.unknown()).meta({
  id: 'Mem0Memory',
  description:
    "a memory in mem0's shape: id, memory, user_id, agent_id, app_id, run_id, hash, metadata, categories, created_at, " +
    'updated_at (ISO 8601), score in searches',
});

// A conversation's message without its own time: mem0 gives one `timestamp` for the call.
const message = conversationMessage.omit({ occurred_at: true });
const epochSeconds = z
  .number()
  .int()
  .min(0)
  .max(Math.floor(MAX_EPOCH_MS / 1000));
const addBody = z.object({
  messages: z.union([
    z.array(message).min(1).max(BATCH_CREATE_MAX),
    message.transform((m) => [m]),
    z.string().transform((content) => [{ role: 'user' as const, content, name: undefined }]),
  ]),
  ...scopeFields,
  app_id: namespaceName.optional(),
  metadata: metadata.optional(),
  infer: z.boolean().default(true),
  timestamp: epochSeconds.optional().meta({ description: 'when the messages were said, in epoch seconds' }),
  async_mode: z.boolean().optional(),
  enable_graph: z.boolean().optional(),
  custom_categories: z.unknown().optional(),
});

// `slots`: the search slots; `batches`: the batch writes' slots.
export function mem0Routes(deps: ApiDeps, queries: QueryVectors, slots: FairSlots, batches: FairSlots): AnyRoute[] {
  const upgradeUrl = upgradeUrlOf(deps.config);
  const llm = { llm: deps.llm, escrowKey: deps.config.byokEscrowKey };
  const listFilters = (filters: Record<string, unknown> | undefined): MemoryFilters => (filters ? { expression: filters } : {});
  // mem0's clients send fields of theirs that mean nothing here (output_format, version, org and project ids).
  return ignoringUnknownFields([
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'get',
      path: `${MEM0_PREFIX}/v1/ping`,
      summary: "mem0's key check: answers the token's org (its project is the org's default one)",
      responses: {
        200: {
          description: 'The token is valid',
          schema: z.object({ status: z.string(), org_id: z.string(), project_id: z.string(), user_email: z.null() }),
        },
      },
      handler: async (ctx) => {
        ctx.body = { status: 'ok', org_id: callerOf(ctx).orgId, project_id: DEFAULT_NAMESPACE, user_email: null };
      },
    }),
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'post',
      path: `${MEM0_PREFIX}/v3/memories/add`,
      summary: "mem0's add: the messages saved as a conversation (POST /api/conversations), their facts extracted when infer (the default)",
      body: addBody,
      responses: {
        200: {
          description: 'Saved; with infer the extraction is queued (event_id)',
          schema: z.object({
            results: z.array(mem0MemorySchema),
            status: z.string(),
            event_id: z.string().nullable(),
            message: z.string(),
          }),
        },
      },
      handler: async (ctx, { body }) => {
        if (body.enable_graph) throw notSupported('graph memory (enable_graph)');
        if (body.custom_categories !== undefined) throw notSupported('custom categories');
        const captured = await captureConversation(
          ctx.state.em,
          callerOf(ctx),
          {
            messages: body.messages.map((m) => ({
              role: m.role,
              content: m.content,
              name: m.name,
              occurredAt: body.timestamp !== undefined ? body.timestamp * 1000 : undefined,
            })),
            namespace: body.app_id,
            metadata: body.metadata,
            userId: body.user_id,
            agentId: body.agent_id,
            runId: body.run_id,
            infer: body.infer,
          },
          { upgradeUrl, llm },
        );
        const extraction = captured.extraction;
        ctx.body = {
          results: captured.memories.map((m) => ({ ...mem0Memory(m), event: 'ADD' })),
          status: extraction ? (extraction.status === 'queued' ? 'PENDING' : extraction.status.toUpperCase()) : 'SUCCEEDED',
          event_id: extraction?.id ?? null,
          message: extraction
            ? `messages saved; extraction ${extraction.status}${extraction.reason ? ` (${extraction.reason})` : ''}`
            : 'messages saved',
        };
      },
    }),
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'post',
      path: `${MEM0_PREFIX}/v3/memories`,
      write: false,
      summary: "mem0's get_all: memories matching its filters, newest first, a page at a time",
      query: z.object({
        page: z.coerce.number().int().min(1).max(10_000).default(1),
        page_size: z.coerce.number().int().min(1).max(500).default(100),
      }),
      body: z.object({ filters: mem0Filters.optional() }),
      responses: {
        200: {
          description: 'One page',
          schema: z.object({
            count: z.number().int().nullable(),
            next: z.string().nullable(),
            previous: z.string().nullable(),
            results: z.array(mem0MemorySchema),
          }),
        },
      },
      handler: async (ctx, { query, body }) => {
        const { page, page_size } = query;
        const result = await listMemories(ctx.state.em, callerOf(ctx).orgId, {
          ...listFilters(body.filters),
          limit: page_size,
          offset: (page - 1) * page_size,
          order: 'newest',
        });
        const more = result.total === null ? result.memories.length === page_size : page * page_size < result.total;
        const link = (p: number) => `${ctx.origin}${MEM0_PREFIX}/v3/memories/?page=${p}&page_size=${page_size}`;
        ctx.body = {
          count: result.total,
          next: more ? link(page + 1) : null,
          previous: page > 1 ? link(page - 1) : null,
          results: result.memories.map(mem0Memory),
        };
      },
    }),
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'post',
      path: `${MEM0_PREFIX}/v3/memories/search`,
      write: false,
      summary: "mem0's search: hybrid search (words only on a server without an embedding model) with its filters, top_k and threshold",
      body: z.object({
        query: z.string().trim().min(1).max(4000),
        filters: mem0Filters.optional(),
        top_k: z.number().int().min(1).max(100).default(10),
        threshold: z
          .number()
          .min(0)
          .max(1)
          .optional()
          .meta({ description: 'hits whose relevance (0-1, the score given) is below it are left out' }),
      }),
      responses: { 200: { description: 'Hits, best first', schema: z.object({ results: z.array(mem0MemorySchema) }) } },
      handler: async (ctx, { body }) => {
        const { orgId } = callerOf(ctx);
        const mode = deps.embedder ? ('hybrid' as const) : ('lexical' as const);
        const fresh = freshVectors(deps.embedder, orgId);
        const request = { text: body.query, k: body.top_k, mode, filters: listFilters(body.filters), minRelevance: body.threshold };
        const { hits } = await slots.run(orgId, () => {
          const vector = deps.embedder ? queries.of(orgId, [body.query]).then(([v]) => v!) : undefined;
          return searchMemories(ctx.state.em, orgId, request, vector, fresh);
        });
        // mem0's score is a similarity in [0, 1] that its threshold compares: ours is the relevance.
        ctx.body = { results: hits.map((hit) => mem0Memory({ ...hit, score: hit.relevance })) };
      },
    }),
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'get',
      path: `${MEM0_PREFIX}/v1/memories/:id`,
      summary: "mem0's get",
      params: z.object({ id: z.uuid() }),
      responses: { 200: { description: 'The memory', schema: mem0MemorySchema }, 404: { description: 'No such memory in this org' } },
      handler: async (ctx, { params }) => {
        ctx.body = mem0Memory(await getMemory(ctx.state.em, callerOf(ctx).orgId, params.id));
      },
    }),
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'put',
      path: `${MEM0_PREFIX}/v1/memories/:id`,
      summary: "mem0's update: new text, metadata (merged) and timestamp (epoch seconds, the event time)",
      params: z.object({ id: z.uuid() }),
      body: z.object({
        text: z.string().optional(),
        metadata: metadata.optional(),
        timestamp: epochSeconds.optional(),
        expiration_date: z.unknown().optional(),
      }),
      responses: {
        200: { description: 'The memory as updated', schema: mem0MemorySchema },
        404: { description: 'No such memory in this org' },
      },
      handler: async (ctx, { params, body }) => {
        if (body.expiration_date !== undefined && body.expiration_date !== null) throw notSupported('expiration dates');
        const patch = {
          content: body.text,
          metadata: body.metadata,
          occurredAt: body.timestamp !== undefined ? body.timestamp * 1000 : undefined,
        };
        ctx.body = mem0Memory(await updateMemory(ctx.state.em, callerOf(ctx), params.id, patch, { upgradeUrl, llm }));
      },
    }),
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'delete',
      path: `${MEM0_PREFIX}/v1/memories/:id`,
      summary: "mem0's delete",
      params: z.object({ id: z.uuid() }),
      query: z.object({ delete_linked: z.enum(['true', 'false', 'True', 'False']).optional() }),
      responses: {
        200: { description: 'Deleted', schema: z.object({ message: z.string() }) },
        404: { description: 'No such memory in this org' },
      },
      handler: async (ctx, { params, query }) => {
        if (query.delete_linked?.toLowerCase() === 'true') throw notSupported('deleting the memories a memory superseded (delete_linked)');
        await deleteMemory(ctx.state.em, callerOf(ctx), params.id);
        ctx.body = { message: 'Memory deleted successfully!' };
      },
    }),
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'delete',
      path: `${MEM0_PREFIX}/v1/memories`,
      summary: "mem0's delete_all: a deletion by filter (admins; at least one of user_id, agent_id, app_id, run_id), run in the background",
      query: z.object({ ...scopeFields, app_id: namespaceName.optional() }),
      responses: {
        200: { description: 'The deletion started', schema: z.object({ message: z.string(), deletion_id: z.string() }) },
        400: { description: '`filter_required`' },
      },
      handler: async (ctx, { query }) => {
        const deletion = await requestDeletion(ctx.state.em, callerOf(ctx), {
          userId: query.user_id,
          agentId: query.agent_id,
          runId: query.run_id,
          namespace: query.app_id,
        });
        ctx.body = {
          message: `Deleting the ${deletion.matched} memories that match (GET /api/memories/deletions/${deletion.id} follows it)`,
          deletion_id: deletion.id,
        };
      },
    }),
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'get',
      path: `${MEM0_PREFIX}/v1/memories/:id/history`,
      summary: "mem0's history: what was done to the memory, oldest first",
      params: z.object({ id: z.uuid() }),
      responses: {
        200: { description: 'Its events', schema: z.array(z.record(z.string(), z.unknown())) },
        404: { description: 'No such memory in this org' },
      },
      handler: async (ctx, { params }) => {
        const { orgId } = callerOf(ctx);
        const [memory, history] = await Promise.all([
          getMemory(ctx.state.em, orgId, params.id),
          memoryHistory(ctx.state.em, orgId, params.id, { limit: HISTORY_PAGE_MAX }),
        ]);
        const EVENTS: Record<string, string> = { 'memory.save': 'ADD', 'memory.update': 'UPDATE', 'memory.delete': 'DELETE' };
        ctx.body = history.events.map((e) => ({
          id: e.id,
          memory_id: params.id,
          event: EVENTS[e.action] ?? e.action,
          old_memory: null,
          new_memory: e.action === 'memory.delete' ? null : memory.content,
          created_at: iso(e.createdAt),
          details: e.details,
        }));
      },
    }),
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'put',
      path: `${MEM0_PREFIX}/v1/batch`,
      summary: "mem0's batch_update: up to 100 memories' text and metadata",
      body: z.object({
        memories: z
          .array(z.object({ memory_id: z.uuid(), text: z.string().optional(), metadata: metadata.optional() }))
          .min(1)
          .max(100),
      }),
      responses: {
        200: {
          description: 'Updated',
          schema: z.object({ message: z.string(), failed: z.array(z.object({ memory_id: z.string().nullable(), error: z.string() })) }),
        },
      },
      handler: async (ctx, { body }) => {
        const items = body.memories.map((m) => ({ id: m.memory_id, content: m.text, metadata: m.metadata }));
        const caller = callerOf(ctx);
        const result = await batches.run(caller.orgId, () => batchUpdate(ctx.state.em, caller, items, { upgradeUrl, llm }));
        ctx.body = {
          message: `Successfully updated ${result.results.length} memories`,
          failed: result.failed.map((f) => ({ memory_id: f.id, error: f.error })),
        };
      },
    }),
    defineRoute({
      tag: TAG,
      access: 'caller',
      method: 'delete',
      path: `${MEM0_PREFIX}/v1/batch`,
      summary: "mem0's batch_delete: up to 100 memories, each on its own (one not found is listed in failed; the others are deleted)",
      body: z.object({
        memories: z
          .array(z.object({ memory_id: z.uuid() }))
          .min(1)
          .max(100),
      }),
      responses: {
        200: {
          description: 'Deleted',
          schema: z.object({ message: z.string(), failed: z.array(z.object({ memory_id: z.string(), error: z.string() })) }),
        },
      },
      handler: async (ctx, { body }) => {
        const caller = callerOf(ctx);
        const failed: { memory_id: string; error: string }[] = [];
        for (const { memory_id } of body.memories) {
          try {
            await deleteMemory(ctx.state.em, caller, memory_id);
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            failed.push({ memory_id, error: err.error });
          }
        }
        ctx.body = { message: `Successfully deleted ${body.memories.length - failed.length} memories`, failed };
      },
    }),
  ]);
}
