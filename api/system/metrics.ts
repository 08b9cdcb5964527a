import { unauthenticated } from '../../domain/errors.ts';
import { registry, scrape, scrapeAllowed } from '../../infra/metrics.ts';
import type { ApiDeps } from '../deps.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';

// Prometheus scrapes this process here (docs/operations.md lists the metrics). It is for operators, not for
// API clients: the OpenAPI document leaves it out.
export function metricsRoutes(deps: ApiDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/metrics',
      tag: 'system',
      access: 'public',
      summary: "The process's Prometheus metrics (a bearer METRICS_TOKEN when one is configured)",
      responses: {
        200: { description: 'Prometheus text exposition', contentType: registry.contentType },
        401: { description: 'METRICS_TOKEN missing or wrong' },
      },
      handler: async (ctx) => {
        if (!scrapeAllowed(ctx.get('authorization') || undefined, deps.config.METRICS_TOKEN)) {
          ctx.set('WWW-Authenticate', 'Bearer');
          const sent = ctx.get('authorization') !== '';
          const message = `${sent ? 'this is not METRICS_TOKEN: ' : ''}send METRICS_TOKEN as a bearer token`;
          throw unauthenticated(sent ? 'unknown_token' : 'no_credential', message);
        }
        ctx.type = registry.contentType;
        ctx.body = await scrape();
      },
    }),
  ];
}
