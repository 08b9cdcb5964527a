import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import { defineRoute, openApiPaths, type AnyRoute } from '../http/route.ts';

const require = createRequire(import.meta.url);
const SWAGGER_DIR = join(require.resolve('swagger-ui-dist/package.json'), '..');
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

export function buildOpenApi(routes: AnyRoute[], serverUrl: string) {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Memory Service API',
      version: '0.1.0',
      description:
        'Multi-tenant memory service for AI agents. Every route but the public auth routes needs `Authorization: Bearer svc_...` or the `svc_session` cookie (cookie checked first). Errors are `{ error, message?, ...extra }`; validation errors add `issues: [{ path, message }]`. Timestamps are epoch milliseconds. See docs/api-decisions.md for choices the contract leaves open.',
    },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'an API token, `svc_...`' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'svc_session' },
      },
    },
    paths: openApiPaths(routes),
  });
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
      tag: 'system',
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
      tag: 'system',
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
      tag: 'system',
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
