import { z } from 'zod';
import { query, sql } from '../../domain/sql.ts';
import type { ApiDeps } from '../deps.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';

const check = z.enum(['ok', 'down']);

export function systemRoutes(deps: ApiDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      tag: 'system',
      access: 'public',
      summary: 'The process is up',
      responses: { 200: { description: 'Up', schema: z.object({ ok: z.literal(true) }) } },
      handler: async (ctx) => {
        ctx.body = { ok: true };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      tag: 'system',
      access: 'public',
      summary: 'The database and Temporal are reachable',
      responses: {
        200: { description: 'Ready', schema: z.object({ ok: z.boolean(), database: check, temporal: check }) },
        503: { description: 'A dependency is down', schema: z.object({ ok: z.boolean(), database: check, temporal: check }) },
      },
      handler: async (ctx) => {
        const within = <T>(p: Promise<T>) =>
          Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000))]);
        const [database, temporal] = await Promise.all([
          within(query(ctx.state.em, sql`select 1`)).then(
            () => 'ok' as const,
            () => 'down' as const,
          ),
          within(deps.temporal.workflowService.getSystemInfo({})).then(
            () => 'ok' as const,
            () => 'down' as const,
          ),
        ]);
        const ok = database === 'ok' && temporal === 'ok';
        ctx.status = ok ? 200 : 503;
        ctx.body = { ok, database, temporal };
      },
    }),
  ];
}
