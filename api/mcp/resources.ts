import { ResourceTemplate, type McpServer, type ReadResourceResult } from '@modelcontextprotocol/server';
import type { ApiCall } from './api-call.ts';

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
export function registerResources(server: McpServer, call: ApiCall): void {
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
