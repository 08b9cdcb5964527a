import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { conversationBody } from '../conversations/requests.ts';
import { createBody, listBody, patchBody, similarQuery } from '../memories/requests.ts';
import { filterFields } from '../memories/schemas.ts';
import { listQuery as runbookQuery, outcomeBody } from '../procedural/requests.ts';
import { recallBody } from '../recall/requests.ts';
import { RECOMMENDED_FLOOR } from '../../domain/search/relevance.ts';
import type { ApiAnswer, ApiCall } from './api-call.ts';
import { INSTRUCTIONS } from './instructions.ts';
import { listed } from './listed.ts';
import { registerResources } from './resources.ts';
import { agentAnswer, agentSearchAnswer, agentSearchBody } from './search-answer.ts';

const id = z.object({ id: z.uuid() });
// A path segment from a tool's input, which reaches here unchecked when the schema refused it (listed.ts).
const segment = (value: unknown): string => encodeURIComponent(String(value));

// A tool's input as the query string of a GET route; fields left out stay out, and a list's items are repeated
// parameters (tags=a&tags=b).
const queryString = (input: Record<string, unknown>): URLSearchParams =>
  new URLSearchParams(Object.entries(input).flatMap(([k, v]) => [v ?? []].flat().map((item) => [k, String(item)] as [string, string])));

// An API error becomes a tool error an agent can act on: the API's `error` code first, then its message,
// then what to do (wait Retry-After seconds, upgrade, fix the input). `_meta` has the API's error body as it is.
function toolResult(answer: ApiAnswer, ok: (body: unknown) => Record<string, unknown>): CallToolResult {
  if (answer.status < 400) {
    const structured = ok(answer.body);
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }
  const body = (answer.body ?? {}) as {
    [field: string]: unknown;
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
    _meta: {
      ...body,
      status: answer.status,
      error: body.error ?? null,
      ...(answer.retryAfter ? { retry_after: Number(answer.retryAfter) } : {}),
    },
  };
}

// The memory tools, each a thin call of one API route with the route's own request schema. Only search_memories
// declares its answer's schema: its hits are shaped for agents (search-answer.ts); the others answer the route's
// JSON, described by the OpenAPI document, and listing those schemas cost every agent about 25 KB of context.
export function createMcpServer(call: ApiCall): McpServer {
  const server = new McpServer({ name: 'memory-service', version: '1.0.0' }, { instructions: INSTRUCTIONS });
  // Most tools answer the route's JSON as it is.
  const asIs = (body: unknown) => body as Record<string, unknown>;
  // Annotations other than the protocol's defaults (not read-only, destructive, not idempotent, open world).
  const writes = { destructiveHint: false, openWorldHint: false };
  const reads = { readOnlyHint: true, openWorldHint: false };
  server.registerTool(
    'add_memory',
    {
      title: 'Save a memory',
      description:
        'Saves one memory (secrets redacted), searchable at once. The parts of one document: the same metadata.parent_ref, each its metadata.chunk_index.',
      inputSchema: listed(createBody),
      annotations: writes,
    },
    async (input) => toolResult(await call('POST', '/api/memories', input), asIs),
  );
  server.registerTool(
    'save_conversation',
    {
      title: 'Save a conversation',
      description:
        "Saves a conversation's messages in order as the turns of one thread (conversation_id; default run_id, else a new one). Scopes, project, tags and metadata apply to each.",
      inputSchema: listed(conversationBody),
      annotations: writes,
    },
    async (input) => toolResult(await call('POST', '/api/conversations', input), asIs),
  );
  server.registerTool(
    'search_memories',
    {
      title: 'Search memories',
      description: `Memories best matching a query in any words, best first. min_relevance: ${RECOMMENDED_FLOOR} drops likely noise (relevance 0-1), so no hits means nothing relevant. matched_passage: where a long memory matched.`,
      inputSchema: listed(agentSearchBody),
      outputSchema: listed(agentSearchAnswer),
      annotations: reads,
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
      description: 'One memory by id, with its metadata and edit history.',
      inputSchema: listed(id),
      annotations: reads,
    },
    async ({ id }) => toolResult(await call('GET', `/api/memories/${segment(id)}`), asIs),
  );
  server.registerTool(
    'find_similar_memories',
    {
      title: 'Memories like this one',
      description: 'Memories nearest in meaning to one memory, best first: what else is known of its subject, or restatements to merge.',
      inputSchema: listed(id.extend({ ...similarQuery.pick({ k: true, namespace: true }).shape, tags: filterFields.tags })),
      annotations: reads,
    },
    async ({ id, ...input }) => toolResult(await call('GET', `/api/memories/${segment(id)}/similar?${queryString(input)}`), asIs),
  );
  server.registerTool(
    'update_memory',
    {
      title: 'Update a memory',
      description: 'Changes content, tags, project, scopes (null removes one) or metadata (merged; a key set to null is removed).',
      inputSchema: listed(patchBody.extend(id.shape)),
      annotations: { ...writes, idempotentHint: true },
    },
    async ({ id, ...patch }) => toolResult(await call('PATCH', `/api/memories/${segment(id)}`, patch), asIs),
  );
  server.registerTool(
    'delete_memory',
    {
      title: 'Delete a memory',
      description: 'Deletes a memory for good.',
      inputSchema: listed(id),
      annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ id }) => toolResult(await call('DELETE', `/api/memories/${segment(id)}`), () => ({ deleted: true, id })),
  );
  server.registerTool(
    'list_memories',
    {
      title: 'List memories',
      description: 'Memories matching filters, a page at a time; total counts every match.',
      inputSchema: listed(listBody),
      annotations: reads,
    },
    async (input) => toolResult(await call('POST', '/api/memories/list', input), asIs),
  );
  server.registerTool(
    'list_projects',
    { title: 'List projects', description: "The org's projects, latest active first, with their memory counts.", annotations: reads },
    async () => toolResult(await call('GET', '/api/projects'), asIs),
  );
  server.registerTool(
    'find_runbooks',
    {
      title: 'Find runbooks',
      description: 'Step-by-step procedures of the org, by trigger phrase or words; latest changed first.',
      inputSchema: listed(runbookQuery),
      annotations: reads,
    },
    async (input) => toolResult(await call('GET', `/api/procedural?${queryString(input)}`), asIs),
  );
  server.registerTool(
    'record_runbook_outcome',
    {
      title: 'Report how a runbook went',
      description: 'After following a runbook: success or failure, which ranks runbooks.',
      inputSchema: listed(outcomeBody.extend({ id: z.uuid().describe('the runbook id') })),
      annotations: writes,
    },
    async ({ id, ...outcome }) => toolResult(await call('POST', `/api/procedural/${segment(id)}`, outcome), asIs),
  );
  server.registerTool(
    'log_recall',
    {
      title: 'Log a recall',
      description: 'Records that memories were used to answer.',
      inputSchema: listed(recallBody),
      annotations: writes,
    },
    async (input) => toolResult(await call('POST', '/api/recall', input), asIs),
  );
  registerResources(server, call);
  return server;
}
