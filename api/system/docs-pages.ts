import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/route.ts';

// The project's guides, served as they are in docs/, so that the API reference's links to them work for a hosted
// user with no checkout. Named one by one: nothing else of the folder (its screenshots) is served.
export const DOC_PAGES = [
  'api-decisions.md',
  'architecture.md',
  'changelog.md',
  'configuration.md',
  'dashboard.md',
  'errors.md',
  'mem0-migration.md',
  'operations.md',
  'performance.md',
  'roles.md',
] as const;

const DOCS_DIR = new URL('../../docs/', import.meta.url);

export function docsPagesRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/docs/:page',
      tag: 'docs',
      access: 'public',
      summary: "One of the service's guides, in Markdown: decisions, error codes, roles, configuration, operations, mem0 migration",
      params: z.object({ page: z.enum(DOC_PAGES) }),
      responses: { 200: { description: 'Markdown', contentType: 'text/markdown' } },
      handler: async (ctx, { params }) => {
        ctx.type = 'text/markdown; charset=utf-8';
        ctx.set('Cache-Control', 'public, max-age=3600');
        ctx.body = await readFile(new URL(params.page, DOCS_DIR), 'utf8');
      },
    }),
  ];
}
