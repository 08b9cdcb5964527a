import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import { closeRequestBodies, defineRoute, openApiPaths, type AnyRoute } from '../http/route.ts';
import { DOC_PAGES } from './docs-pages.ts';

const require = createRequire(import.meta.url);
const SWAGGER_DIR = join(require.resolve('swagger-ui-dist/package.json'), '..');
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

// The reference's sections in the order a user needs them: memories and search first, operators' routes last.
const TAGS: [string, string][] = [
  ['memories', 'Save, read, change, delete, list and search memories: start here'],
  ['threads', 'Conversations and documents saved in parts, read in order'],
  ['projects', "The org's projects (namespaces)"],
  ['entities', 'People, projects and tools that extraction found in memories'],
  ['recall', 'What agents recalled, for the record'],
  ['runbooks', 'Procedures that worked, found by their trigger phrases'],
  ['consolidation', 'Duplicate and conflicting memories found and merged'],
  ['chat', "Conversations grounded on the org's memories"],
  ['exports', 'Everything, as a file'],
  ['mem0 compatibility', "mem0's own clients, unchanged, at /compat/mem0"],
  ['webhooks', 'Endpoints told of saves, updates and deletes'],
  ['tokens', 'API tokens'],
  ['auth', 'Accounts, sign-in and sessions'],
  ['orgs', 'Organizations and their members'],
  ['audit', 'Who did what'],
  ['billing', "Plans, checkout, and the payment processor's webhook"],
  ['mcp', 'The Model Context Protocol endpoint and its metadata'],
  ['oauth', 'The authorization server that MCP clients sign in through'],
  ['dashboard', 'The web app'],
  ['docs', 'This reference, the guides it links to, and llms.txt'],
  ['system', "For operators: health, readiness, metrics, the Temporal Web UI's codec"],
];

// Mentions of a served guide ("docs/api-decisions.md") become links to it, so they work without a checkout.
function linkGuides(node: unknown, serverUrl: string): void {
  if (Array.isArray(node)) for (const item of node) linkGuides(item, serverUrl);
  else if (node !== null && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    for (const [key, value] of Object.entries(record)) {
      if (key === 'description' && typeof value === 'string') {
        record[key] = value.replace(/docs\/([a-z0-9-]+\.md)/g, (mention, page: string) =>
          (DOC_PAGES as readonly string[]).includes(page) ? `[${mention}](${serverUrl}/docs/${page})` : mention,
        );
      } else linkGuides(value, serverUrl);
    }
  }
}

export function buildOpenApi(routes: AnyRoute[], serverUrl: string) {
  const document = createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Memory Service API',
      version: '0.1.0',
      description:
        'Multi-tenant memory service for AI agents. Every route but the public auth routes needs `Authorization: Bearer ' +
        'svc_...` or the `svc_session` cookie (cookie checked first). Errors are `{ error, message?, ...extra }`; ' +
        'validation errors add `issues: [{ path, message }]`, and docs/errors.md lists every code. Timestamps are epoch ' +
        'milliseconds. See docs/api-decisions.md for choices the contract leaves open, docs/changelog.md for what was ' +
        'added to it and when, and /llms.txt for where an agent starts.',
    },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'an API token, `svc_...`' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'svc_session' },
      },
    },
    tags: TAGS.map(([name, description]) => ({ name, description })),
    paths: openApiPaths(routes),
  });
  closeRequestBodies(document, routes);
  linkGuides(document, serverUrl);
  return document;
}

const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Memory Service API</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/api/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#ui', deepLinking: true });</script>
</body></html>`;

// The document is built once from the same zod schemas that validate requests.
export function docsRoutes(getRoutes: () => AnyRoute[], serverUrl: string): AnyRoute[] {
  let document: unknown;
  return [
    defineRoute({
      method: 'get',
      path: '/api/openapi.json',
      tag: 'docs',
      access: 'public',
      summary: 'This OpenAPI 3.1 document',
      responses: { 200: { description: 'OpenAPI document' } },
      handler: async (ctx) => {
        document ??= buildOpenApi(getRoutes(), serverUrl);
        ctx.body = document;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/docs',
      tag: 'docs',
      access: 'public',
      summary: 'Human-readable API reference (Swagger UI over the OpenAPI document)',
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handler: async (ctx) => {
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = DOCS_PAGE;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/docs/:asset',
      tag: 'docs',
      access: 'public',
      summary: 'Static assets of the docs page',
      params: z.object({ asset: z.enum(Object.keys(ASSETS) as [string, ...string[]]) }),
      responses: { 200: { description: 'Asset' } },
      handler: async (ctx, { params }) => {
        ctx.type = ASSETS[params.asset]!;
        ctx.set('Cache-Control', 'public, max-age=86400');
        ctx.body = await readFile(join(SWAGGER_DIR, params.asset));
      },
    }),
  ];
}
