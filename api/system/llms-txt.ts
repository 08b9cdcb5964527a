import { defineRoute, type AnyRoute } from '../http/route.ts';

// /llms.txt (llmstxt.org): what an agent reading the service's address needs first, in Markdown, with links to
// the machine-readable documents the service itself serves.
function llmsTxt(base: string): string {
  return `# Memory Service

> A hosted memory for AI agents: save what lasts (facts, preferences, decisions, whole conversations) and find it
> again by words and by meaning, per end user, agent and run.

Every call but the documents below needs \`Authorization: Bearer svc_...\`, an API token from the dashboard's
tokens page (${base}/dashboard). Errors are JSON \`{ "error", "message" }\` with the HTTP status; a 429 carries
\`Retry-After\` (seconds) and did nothing, so the call can be repeated after it.

## Docs

- [OpenAPI document](${base}/api/openapi.json): every route with its request and response schemas
- [API reference](${base}/api/docs): the same document as a page
- [OAuth protected-resource metadata](${base}/.well-known/oauth-protected-resource): how an MCP client authenticates
- [The API's decisions](${base}/docs/api-decisions.md): every choice the reference leaves open, by topic
- [Error codes](${base}/docs/errors.md): every \`error\` code with its status and meaning

## MCP

The Model Context Protocol is served at ${base}/mcp (Streamable HTTP), with the bearer token above. Its
instructions say when to search and when to save; \`search_memories\` and \`add_memory\` are the everyday tools.

## The everyday calls

- \`POST /api/memories\` \`{ content, user_id?, agent_id?, run_id?, namespace?, tags?, metadata?, occurred_at? }\`: save one memory
- \`POST /api/memories/batch\` \`{ memories: [...] }\`: save up to 500; failed items come back with their index
- \`POST /api/memories/search\` \`{ query, mode: "hybrid", user_id?, k?, min_relevance? }\`: hits best first, each with
  \`relevance\` in [0, 1] (the same scale in every mode; 0.15 is the recommended floor for "nothing relevant")
- \`POST /api/conversations\` \`{ messages: [{ role, content }], user_id?, infer? }\`: a conversation saved as a thread;
  \`infer: true\` also distils its facts into memories
- \`GET\`, \`PATCH\`, \`DELETE /api/memories/{id}\`; \`POST /api/memories/list\` pages through memories by filter

## Optional

- Clients: Python \`memory-service-client\` (sync and async, with adapters for LangGraph, the OpenAI Agents SDK and
  Anthropic's memory tool), TypeScript \`@memory-service/client\` (with tools for the Vercel AI SDK), and the stdio MCP
  server \`@memory-service/mcp\`
- mem0's own clients work unchanged with their host set to ${base}/compat/mem0
`;
}

export function llmsTxtRoutes(base: string): AnyRoute[] {
  const body = llmsTxt(base);
  return [
    defineRoute({
      method: 'get',
      path: '/llms.txt',
      tag: 'docs',
      access: 'public',
      summary: 'What an agent needs first (llmstxt.org): where the docs, the OpenAPI document and MCP are, and the everyday calls',
      responses: { 200: { description: 'Markdown', contentType: 'text/markdown' } },
      handler: async (ctx) => {
        ctx.type = 'text/markdown; charset=utf-8';
        ctx.set('Cache-Control', 'public, max-age=3600');
        ctx.body = body;
      },
    }),
  ];
}
