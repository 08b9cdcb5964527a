import type { Middleware } from 'koa';
import { rateLimited } from '../../domain/errors.ts';
import { takeSlot } from '../../domain/ratelimit/take.ts';
import type { AppState } from './state.ts';

// What a limit counts: writes per rolling minute (section 8 of the contract), or reads per rolling second (our
// addition, off unless READ_RATE_LIMIT_PER_SECOND is set: the contract leaves reads unlimited).
const COUNTED = {
  write: { windowSeconds: 60, per: 'minute' },
  read: { windowSeconds: 1, per: 'second' },
} as const;

// Each request of its kind spends one slot of the caller's credential; 0 turns the limit off. An MCP request's
// tool calls are requests of their own (api/mcp/endpoint.ts), each counted.
export function rateLimit(kind: keyof typeof COUNTED, limit: number): Middleware<AppState> {
  const { windowSeconds, per } = COUNTED[kind];
  return async (ctx, next) => {
    const caller = ctx.state.caller;
    if (limit > 0 && caller) {
      const key = `${kind}:${caller.credentialId ?? `local:${caller.userId}`}`;
      const slot = await takeSlot(ctx.state.em, key, limit, windowSeconds);
      // What the caller has left, before it bites (the IETF draft's RateLimit-* fields): events in the window, and
      // seconds until the next one frees.
      ctx.set('RateLimit-Limit', String(limit));
      ctx.set('RateLimit-Remaining', String(slot.remaining));
      ctx.set('RateLimit-Reset', String(slot.resetSeconds));
      if (!slot.allowed) {
        throw rateLimited('rate-limited', `at most ${limit} ${kind}s per ${per} per token`, slot.retryAfterSeconds);
      }
    }
    await next();
  };
}
