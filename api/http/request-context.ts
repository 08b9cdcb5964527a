import type { MikroORM } from '@mikro-orm/postgresql';
import type { Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Caller } from '../../domain/accounts/caller.ts';
import type { AppState } from './state.ts';

const INCOMING_ID = /^[\w.:-]{1,128}$/;

// Gives each request an id (kept from X-Request-Id when it is sane), a child logger, its own
// EntityManager, and one access-log line when it ends.
export function requestContext(orm: MikroORM, logger: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    const started = performance.now();
    ctx.set('X-Request-Id', requestId);
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ reqId: requestId });
    ctx.state.em = orm.em.fork();
    ctx.state.caller = null;
    try {
      await next();
    } finally {
      const caller = ctx.state.caller as Caller | null;
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          ...(caller ? { orgId: caller.orgId, userId: caller.userId } : {}),
        },
        'request',
      );
    }
  };
}
