import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { createBody, listBody, patchBody, searchBody } from '../memories/routes.ts';
import { memorySchema, scoredMemorySchema } from '../memories/schemas.ts';
import { listQuery as runbookQuery, outcomeBody, runbookSchema } from '../procedural/routes.ts';
import { projectSchema } from '../projects/routes.ts';
import { recallBody, recallOutcome } from '../recall/routes.ts';

// One request of the public API as a tool sends it: the MCP layer adds no behaviour of its own, so
// validation, quotas, rate limits and tenancy are the API's, answered the API's way.
export interface ApiAnswer {
  status: number;
  body: unknown;
  retryAfter: string | undefined;
}
export type ApiCall = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<ApiAnswer>;

const id = z.object({ id: z.uuid().describe('the memory id') });

// An API error becomes a tool error an agent can act on: the API's `error` code first, then its message,
// then what to do (wait Retry-After seconds, upgrade, fix the input).
export function toolResult(answer: ApiAnswer, ok: (body: unknown) => Record<string, unknown>): CallToolResult {
  if (answer.status < 400) {
    const structured = ok(answer.body);
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }
  const body = (answer.body ?? {}) as { error?: string; message?: string; upgrade_url?: string; issues?: { path: string; message: string }[] };
  const hints = [
    answer.status === 429 && answer.retryAfter ? `retry after ${answer.retryAfter} s` : '',
    body.upgrade_url ? `upgrade at ${body.upgrade_url}` : '',
    body.issues?.length ? `fix: ${body.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}` : '',
  ].filter(Boolean);
  const text = [`${body.error ?? `http_${answer.status}`}: ${body.message ?? 'the request failed'}`, ...hints].join('. ');
  return { isError: true, content: [{ type: 'text', text }], _meta: { status: answer.status, error: body.error ?? null, ...(answer.retryAfter ? { retry_after: Number(answer.retryAfter) } : {}) } };
}

// The memory tools, each a thin call of one API route with the route's own request and answer schemas.
export function createMcpServer(call: ApiCall): McpServer {
  const server = new McpServer({ name: 'memory-service', version: '1.0.0' });
  const memory = (body: unknown) => body as Record<string, unknown>;
  server.registerTool(
    'add_memory',
    {
      title: 'Save a memory',
      description: 'Stores a memory (secrets in it are redacted) and answers at once; embedding and enrichment follow in the background. Found by search as soon as this answers.',
      inputSchema: createBody,
      outputSchema: memorySchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (input) => toolResult(await call('POST', '/api/memories', input), memory),
  );
  server.registerTool(
    'search_memories',
    {
      title: 'Search memories',
      description: 'Best memories for a query: mode "lexical" (words, BM25), "semantic" (meaning: questions in other words) or "hybrid" (both). Filters: namespace, tags, metadata_filter, created_after/before.',
      inputSchema: searchBody,
      outputSchema: z.object({ hits: z.array(scoredMemorySchema) }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (input) => toolResult(await call('POST', '/api/memories/search', input), memory),
  );
  server.registerTool(
    'get_memory',
    { title: 'Read a memory', description: 'One memory by id.', inputSchema: id, outputSchema: memorySchema, annotations: { readOnlyHint: true, openWorldHint: false } },
    async ({ id }) => toolResult(await call('GET', `/api/memories/${id}`), memory),
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
    async ({ id, ...patch }) => toolResult(await call('PATCH', `/api/memories/${id}`, patch), memory),
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
      description: 'Memories matching filters (namespace, tags, metadata_filter, dates, entity), newest first by default, a page at a time (limit, offset); total counts every match.',
      inputSchema: listBody,
      outputSchema: z.object({ memories: z.array(memorySchema), limit: z.number().int(), offset: z.number().int(), total: z.number().int().nullable() }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (input) => toolResult(await call('POST', '/api/memories/list', input), memory),
  );
  server.registerTool(
    'list_projects',
    {
      title: 'List projects',
      description: "The org's projects (namespaces), most recently active first, with their memory counts.",
      outputSchema: z.object({ projects: z.array(projectSchema) }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => toolResult(await call('GET', '/api/projects'), memory),
  );
  server.registerTool(
    'find_runbooks',
    {
      title: 'Find runbooks',
      description: 'Runbooks (step-by-step procedures) of the org: by a trigger phrase (`trigger`, exact) or by words of the title or summary (`q`); most recently changed first.',
      inputSchema: runbookQuery,
      outputSchema: z.object({ procedurals: z.array(runbookSchema) }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (input) => {
      const query = new URLSearchParams(Object.entries(input).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]])));
      return toolResult(await call('GET', `/api/procedural?${query}`), memory);
    },
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
    async ({ id, ...outcome }) => toolResult(await call('POST', `/api/procedural/${id}`, outcome), memory),
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
    async (input) => toolResult(await call('POST', '/api/recall', input), memory),
  );
  return server;
}
