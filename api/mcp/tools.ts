import { McpServer, ResourceTemplate, type CallToolResult, type ReadResourceResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { conversationBody } from '../conversations/requests.ts';
import { capturedConversation } from '../conversations/routes.ts';
import { createBody, listBody, patchBody, searchBody, similarQuery } from '../memories/requests.ts';
import { filterFields, memorySchema, scoredMemorySchema } from '../memories/schemas.ts';
import { listQuery as runbookQuery, outcomeBody } from '../procedural/requests.ts';
import { runbookSchema } from '../procedural/routes.ts';
import { projectSchema } from '../projects/routes.ts';
import { recallBody } from '../recall/requests.ts';
import { recallOutcome } from '../recall/routes.ts';
import { SEARCH_MODES } from '../../domain/search/modes.ts';
import { RECOMMENDED_FLOOR } from '../../domain/search/relevance.ts';

// One request of the public API as a tool sends it: the MCP layer adds no behaviour of its own, so
// validation, quotas, rate limits and tenancy are the API's, answered the API's way.
export interface ApiAnswer {
  status: number;
  body: unknown;
  retryAfter: string | undefined;
}
export type ApiCall = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<ApiAnswer>;

const id = z.object({ id: z.uuid().describe('the memory id') });

// Agents ask in their own words and seldom name a mode, so the tool's search by default is hybrid, as the
// dashboard's is (the route keeps lexical as its default, per the contract). Where no vector can be had for
// the query (no model on this server, or the provider down), it answers by words instead of failing: the
// one place the MCP layer adds behaviour to a route.
const agentSearchBody = searchBody.extend({
  mode: z
    .enum(SEARCH_MODES)
    .optional()
    .describe(
      'hybrid when left out (words and meaning; words alone when this server cannot embed the query); lexical: words only (BM25); semantic: meaning only',
    ),
});

// A search hit as an agent needs it: the memory's words, how relevant it is, where it belongs and when it happened;
// get_memory has the rest (metadata, edit history, who saved it). Fields not set are left out.
export const agentHit = z
  .object({
    id: z.uuid(),
    content: z.string(),
    relevance: z.number().meta({ description: `the calibrated chance (0-1) that the hit is relevant, the same scale in every mode; below ${RECOMMENDED_FLOOR}, most likely noise` }),
    namespace: z.string(),
    tags: z.array(z.string()).optional(),
    occurred_at: z.string().meta({ description: 'when it happened, ISO 8601' }),
    user_id: z.string().optional(),
    agent_id: z.string().optional(),
    run_id: z.string().optional(),
    matched_passage: z.string().optional().meta({ description: 'a long memory found through one of its passages: that passage' }),
    explain: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'AgentSearchHit' });
const agentSearchAnswer = z.object({
  hits: z.array(agentHit),
  pending_embeddings: z.number().int().optional().meta({ description: 'memories of the search\'s scope not yet searchable by meaning' }),
  explain: z.record(z.string(), z.unknown()).optional(),
});
type RouteHit = z.infer<typeof scoredMemorySchema>;
const agentHitOf = (h: RouteHit): z.infer<typeof agentHit> => ({
  id: h.id,
  content: h.content,
  relevance: h.relevance ?? 0,
  namespace: h.namespace,
  ...(h.tags.length > 0 ? { tags: h.tags } : {}),
  occurred_at: new Date(h.occurred_at).toISOString(),
  ...(h.user_id ? { user_id: h.user_id } : {}),
  ...(h.agent_id ? { agent_id: h.agent_id } : {}),
  ...(h.run_id ? { run_id: h.run_id } : {}),
  ...(h.matched_passage ? { matched_passage: h.matched_passage.text } : {}),
  ...(h.explain ? { explain: h.explain } : {}),
});
const agentAnswer = (body: unknown) => {
  const answer = body as { hits: RouteHit[]; pending_embeddings?: number; explain?: Record<string, unknown> };
  return {
    hits: answer.hits.map(agentHitOf),
    ...(answer.pending_embeddings ? { pending_embeddings: answer.pending_embeddings } : {}),
    ...(answer.explain ? { explain: answer.explain } : {}),
  };
};

// A tool's input as the query string of a GET route; fields left out stay out, and a list's items are repeated
// parameters (tags=a&tags=b).
const queryString = (input: Record<string, unknown>): URLSearchParams =>
  new URLSearchParams(Object.entries(input).flatMap(([k, v]) => [v ?? []].flat().map((item) => [k, String(item)] as [string, string])));

// An API error becomes a tool error an agent can act on: the API's `error` code first, then its message,
// then what to do (wait Retry-After seconds, upgrade, fix the input).
export function toolResult(answer: ApiAnswer, ok: (body: unknown) => Record<string, unknown>): CallToolResult {
  if (answer.status < 400) {
    const structured = ok(answer.body);
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }
  const body = (answer.body ?? {}) as {
    error?: string;
    message?: string;
    upgrade_url?: string;
    issues?: { path: string; message: string }[];
  };
  const hints = [
    answer.status === 429 && answer.retryAfter ? `retry after ${answer.retryAfter} s` : '',
    body.upgrade_url ? `upgrade at ${body.upgrade_url}` : '',
    body.issues?.length ? `fix: ${body.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}` : '',
  ].filter(Boolean);
  const text = [`${body.error ?? `http_${answer.status}`}: ${body.message ?? 'the request failed'}`, ...hints].join('. ');
  return {
    isError: true,
    content: [{ type: 'text', text }],
    _meta: { status: answer.status, error: body.error ?? null, ...(answer.retryAfter ? { retry_after: Number(answer.retryAfter) } : {}) },
  };
}

// The memory tools, each a thin call of one API route with the route's own request and answer schemas.
export function createMcpServer(call: ApiCall): McpServer {
  const server = new McpServer({ name: 'memory-service', version: '1.0.0' });
  // Most tools answer the route's JSON as it is.
  const asIs = (body: unknown) => body as Record<string, unknown>;
  server.registerTool(
    'add_memory',
    {
      title: 'Save a memory',
      description:
        'Stores a memory (secrets in it are redacted) and answers at once; embedding and enrichment follow in the background. Found by search as soon as this answers. For the turns of a conversation (or the parts of a document), give each the same metadata.parent_ref and its place as metadata.chunk_index: each is then found by meaning with the two before it as context, so a reply is found by what it answered.',
      inputSchema: createBody,
      outputSchema: memorySchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (input) => toolResult(await call('POST', '/api/memories', input), asIs),
  );
  server.registerTool(
    'save_conversation',
    {
      title: 'Save a conversation',
      description:
        "Saves a conversation's messages (role, content, and optionally name and occurred_at) as the next chunks of its thread in one call: conversation_id names the thread (default: run_id, else a new one, which the answer gives). Use it for the turns of a chat instead of add_memory one turn at a time. Scopes (user_id, agent_id, run_id), project, tags and metadata apply to every message. infer: true also distils the facts worth keeping into memories of their own, kept current (updated or retired) as later conversations change them.",
      inputSchema: conversationBody,
      outputSchema: capturedConversation,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (input) => toolResult(await call('POST', '/api/conversations', input), asIs),
  );
  server.registerTool(
    'search_memories',
    {
      title: 'Search memories',
      description:
        `Best memories for a query, asked in any words: by default "hybrid" (words and meaning); mode "lexical" (words, BM25) or "semantic" (meaning alone). Each hit carries its relevance (0-1, the same scale in every mode); min_relevance: ${RECOMMENDED_FLOOR} leaves out what is most likely noise, so that an empty answer means nothing relevant was found. A long memory found through one of its passages carries that passage (matched_passage), where the answer lies; get_memory gives the rest of a hit (metadata, history). Filters: namespace, tags, metadata_filter, created_after/before, occurred_after/before (when things happened), the scopes user_id, agent_id, run_id, and \`filters\` (AND / OR / NOT over fields and metadata keys, for what the others cannot say).`,
      inputSchema: agentSearchBody,
      outputSchema: agentSearchAnswer,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (input) => {
      if (input.mode) return toolResult(await call('POST', '/api/memories/search', input), agentAnswer);
      const hybrid = await call('POST', '/api/memories/search', { ...input, mode: 'hybrid' });
      const unavailable = hybrid.status === 503 && (hybrid.body as { error?: string } | null)?.error === 'embeddings_unavailable';
      const answer = unavailable ? await call('POST', '/api/memories/search', { ...input, mode: 'lexical' }) : hybrid;
      const result = toolResult(answer, agentAnswer);
      return { ...result, _meta: { ...result._meta, mode: unavailable ? 'lexical' : 'hybrid' } };
    },
  );
  server.registerTool(
    'get_memory',
    {
      title: 'Read a memory',
      description: 'One memory by id.',
      inputSchema: id,
      outputSchema: memorySchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ id }) => toolResult(await call('GET', `/api/memories/${id}`), asIs),
  );
  server.registerTool(
    'find_similar_memories',
    {
      title: 'Memories like this one',
      description:
        'The memories nearest in meaning to one memory (by its stored vector; a copy of its text scores 1), best first, itself left out: to gather what else is known about a subject, or to find restatements before saving or editing. Fails with embedding_pending for a memory saved seconds ago.',
      inputSchema: id.extend({ ...similarQuery.pick({ k: true, namespace: true }).shape, tags: filterFields.tags }),
      outputSchema: z.object({ hits: z.array(scoredMemorySchema) }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ id, ...input }) => toolResult(await call('GET', `/api/memories/${id}/similar?${queryString(input)}`), asIs),
  );
  server.registerTool(
    'update_memory',
    {
      title: 'Update a memory',
      description: 'Changes content, tags, namespace or metadata (merged; a key set to null is removed). A content change re-embeds it.',
      inputSchema: patchBody.extend(id.shape),
      outputSchema: memorySchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ id, ...patch }) => toolResult(await call('PATCH', `/api/memories/${id}`, patch), asIs),
  );
  server.registerTool(
    'delete_memory',
    {
      title: 'Delete a memory',
      description: 'Deletes a memory for good.',
      inputSchema: id,
      outputSchema: z.object({ deleted: z.literal(true), id: z.uuid() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ id }) => toolResult(await call('DELETE', `/api/memories/${id}`), () => ({ deleted: true, id })),
  );
  server.registerTool(
    'list_memories',
    {
      title: 'List memories',
      description:
        'Memories matching filters (namespace, tags, metadata_filter, dates, entity), newest first by default, a page at a time (limit, offset); total counts every match.',
      inputSchema: listBody,
      outputSchema: z.object({
        memories: z.array(memorySchema),
        limit: z.number().int(),
        offset: z.number().int(),
        total: z.number().int().nullable(),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (input) => toolResult(await call('POST', '/api/memories/list', input), asIs),
  );
  server.registerTool(
    'list_projects',
    {
      title: 'List projects',
      description: "The org's projects (namespaces), most recently active first, with their memory counts.",
      outputSchema: z.object({ projects: z.array(projectSchema) }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => toolResult(await call('GET', '/api/projects'), asIs),
  );
  server.registerTool(
    'find_runbooks',
    {
      title: 'Find runbooks',
      description:
        'Runbooks (step-by-step procedures) of the org: by a trigger phrase (`trigger`, exact) or by words of the title or summary (`q`); most recently changed first.',
      inputSchema: runbookQuery,
      outputSchema: z.object({ procedurals: z.array(runbookSchema) }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (input) => toolResult(await call('GET', `/api/procedural?${queryString(input)}`), asIs),
  );
  server.registerTool(
    'record_runbook_outcome',
    {
      title: 'Report how a runbook went',
      description: 'After following a runbook, report success or failure: the success ratio ranks runbook suggestions.',
      inputSchema: outcomeBody.extend({ id: z.uuid().describe('the runbook id') }),
      outputSchema: runbookSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ id, ...outcome }) => toolResult(await call('POST', `/api/procedural/${id}`, outcome), asIs),
  );
  server.registerTool(
    'log_recall',
    {
      title: 'Log a recall',
      description: 'Record that memories were used to answer (source and query optional), so their use is counted.',
      inputSchema: recallBody,
      outputSchema: recallOutcome,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (input) => toolResult(await call('POST', '/api/recall', input), asIs),
  );
  registerResources(server, call);
  return server;
}

// A resource read answers the API's JSON as is; an API error is a protocol error with the API's code.
async function readJson(call: ApiCall, uri: URL, method: 'GET' | 'POST', path: string, body?: unknown): Promise<ReadResourceResult> {
  const answer = await call(method, path, body);
  if (answer.status >= 400) {
    const error = answer.body as { error?: string; message?: string } | undefined;
    throw new Error(`${error?.error ?? `http_${answer.status}`}: ${error?.message ?? 'the request failed'}`);
  }
  return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(answer.body) }] };
}

const one = (value: string | string[] | undefined): string => decodeURIComponent(Array.isArray(value) ? (value[0] ?? '') : (value ?? ''));

// Resources an agent can attach to its context: a project's recent memories, and a runbook.
function registerResources(server: McpServer, call: ApiCall): void {
  server.registerResource(
    'project-recent-memories',
    new ResourceTemplate('memory://projects/{name}/recent', {
      list: async () => {
        const answer = await call('GET', '/api/projects');
        const projects = answer.status < 400 ? (answer.body as { projects: { name: string; memory_count: number }[] }).projects : [];
        return {
          resources: projects.map((p) => ({
            uri: `memory://projects/${encodeURIComponent(p.name)}/recent`,
            name: `${p.name}: recent memories`,
            mimeType: 'application/json',
          })),
        };
      },
    }),
    {
      title: "A project's recent memories",
      description: 'The 50 memories of the project changed last, newest first (as POST /api/memories/list answers).',
      mimeType: 'application/json',
    },
    (uri, variables) =>
      readJson(call, uri, 'POST', '/api/memories/list', { namespace: one(variables.name), limit: 50, order: 'updated_desc' }),
  );
  server.registerResource(
    'runbook',
    new ResourceTemplate('memory://runbooks/{id}', {
      list: async () => {
        const answer = await call('GET', '/api/procedural?limit=100');
        const runbooks = answer.status < 400 ? (answer.body as { procedurals: { id: string; title: string }[] }).procedurals : [];
        return { resources: runbooks.map((r) => ({ uri: `memory://runbooks/${r.id}`, name: r.title, mimeType: 'application/json' })) };
      },
    }),
    {
      title: 'A runbook',
      description: 'A runbook with its steps and outcome counts (as GET /api/procedural/:id answers).',
      mimeType: 'application/json',
    },
    (uri, variables) => readJson(call, uri, 'GET', `/api/procedural/${encodeURIComponent(one(variables.id))}`),
  );
}
