import type { Middleware } from 'koa';
import { AppError } from '../../domain/errors.ts';
import { takeWriteSlot } from '../../domain/ratelimit/take.ts';
import type { AppState } from './state.ts';

// Write routes spend one slot of the caller's credential (section 8); 0 turns the limit off.
export function writeRateLimit(limitPerMinute: number): Middleware<AppState> {
  return async (ctx, next) => {
    const caller = ctx.state.caller;
    if (limitPerMinute > 0 && caller) {
      const key = `write:${caller.credentialId ?? `local:${caller.userId}`}`;
      const slot = await takeWriteSlot(ctx.state.em, key, limitPerMinute);
      if (!slot.allowed) {
        throw new AppError('rate_limited', 'rate-limited', `at most ${limitPerMinute} writes per minute per token; retry in ${slot.retryAfterSeconds} s`, {
          retry_after: slot.retryAfterSeconds,
        });
      }
    }
    await next();
  };
}
