import { readdir, readFile } from 'node:fs/promises';
import { z } from 'zod';
import { AppError, notFound } from '../../domain/errors.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';

// The dashboard (dashboard/), built by scripts/start.sh into dashboard/dist and served on the API's own
// origin, so that it signs in with the session cookie and calls the public API like any client. Every
// page path answers the same index.html; the browser's router shows the page. The policy allows scripts,
// styles and calls from this origin only: no inline script, nothing fetched from elsewhere.
const DIST = new URL('../../dashboard/dist/', import.meta.url);
const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');
const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

// The build's files, read once: they change only when the build does, which restarts the service.
let files: Promise<{ index: Buffer; assets: Map<string, Buffer> }> | undefined;
async function readBuild() {
  const index = await readFile(new URL('index.html', DIST));
  const names = await readdir(new URL('assets/', DIST));
  return {
    index,
    assets: new Map(await Promise.all(names.map(async (name) => [name, await readFile(new URL(`assets/${name}`, DIST))] as const))),
  };
}
const build = () => {
  files ??= readBuild().catch((err: unknown) => {
    files = undefined;
    throw new AppError(
      'unavailable',
      'dashboard_not_built',
      `the dashboard is not built (run scripts/start.sh, or node dashboard/build.ts): ${String(err)}`,
    );
  });
  return files;
};

const page = (path: string, params?: z.ZodObject) =>
  defineRoute({
    method: 'get',
    path,
    tag: 'dashboard',
    access: 'public',
    summary: 'The dashboard (an HTML page; its router shows the part named by the path)',
    ...(params ? { params } : {}),
    responses: { 200: { description: 'HTML page', contentType: 'text/html' }, 503: { description: '`dashboard_not_built`' } },
    handler: async (ctx) => {
      const { index } = await build();
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Content-Security-Policy', DASHBOARD_CSP);
      ctx.body = index;
    },
  });

const section = z.string().regex(/^[a-z-]{1,40}$/);
// A memory id, or a thread's parent_ref (any text the API accepts there).
const id = z.string().min(1).max(500);

export function dashboardRoutes(): AnyRoute[] {
  return [
    page('/dashboard'),
    defineRoute({
      method: 'get',
      path: '/dashboard/assets/:asset',
      tag: 'dashboard',
      access: 'public',
      summary: "The dashboard's scripts and styles (content-hashed names, cached for a year)",
      params: z.object({ asset: z.string().regex(/^[A-Za-z0-9_-]{1,100}\.(?:js|css)$/) }),
      responses: { 200: { description: 'Asset' }, 404: { description: 'No such asset' }, 503: { description: '`dashboard_not_built`' } },
      handler: async (ctx, { params }) => {
        const asset = (await build()).assets.get(params.asset);
        if (!asset) throw notFound('dashboard asset', params.asset);
        ctx.type = TYPES[params.asset.split('.').pop()!]!;
        ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
        ctx.body = asset;
      },
    }),
    page('/dashboard/:section', z.object({ section })),
    page('/dashboard/:section/:id', z.object({ section, id })),
  ];
}
