import type { MikroORM } from '@mikro-orm/postgresql';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { CredentialLookups } from '../../domain/accounts/authenticate.ts';
import type { Caller } from '../../domain/accounts/caller.ts';
import { httpDuration } from '../../infra/metrics.ts';
import { tracer, withRequestId } from '../../infra/tracing.ts';
import type { AppState } from './state.ts';

const INCOMING_ID = /^[\w.:-]{1,128}$/;

// Gives each request an id (kept from X-Request-Id when it is sane), a server span (continuing the caller's
// trace when a `traceparent` header names one) whose context carries the request id as baggage to every
// job the request causes, its own EntityManager, the app's credential lookups (shared, so that the lookups of
// requests that arrive together go in one statement), one access-log line and one latency observation when it
// ends. The route label is the route's pattern, so ids never become label values.
export function requestContext(orm: MikroORM, logger: Logger): Middleware<AppState> {
  const credentials = new CredentialLookups(() => orm.em.fork());
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    const started = performance.now();
    const parent = withRequestId(propagation.extract(ROOT_CONTEXT, ctx.headers), requestId);
    const span = tracer().startSpan(
      `${ctx.method} ${ctx.path}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'memsvc.request_id': requestId } },
      parent,
    );
    ctx.set('X-Request-Id', requestId);
    ctx.state.requestId = requestId;
    ctx.state.log = logger;
    ctx.state.em = orm.em.fork();
    ctx.state.credentials = credentials;
    ctx.state.caller = null;
    await context.with(trace.setSpan(parent, span), async () => {
      try {
        await next();
      } finally {
        const caller = ctx.state.caller as Caller | null;
        const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
        const seconds = (performance.now() - started) / 1000;
        httpDuration.observe({ method: ctx.method, route, status: String(ctx.status) }, seconds);
        span.updateName(`${ctx.method} ${route}`);
        span.setAttributes({
          'http.route': route,
          'http.response.status_code': ctx.status,
          ...(caller ? { 'memsvc.org_id': caller.orgId } : {}),
        });
        if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        ctx.state.log.info(
          {
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            ms: Math.round(seconds * 10_000) / 10,
            ...(caller ? { orgId: caller.orgId, userId: caller.userId } : {}),
          },
          'request',
        );
      }
    });
  };
}
