import type { Middleware } from 'koa';
import type { AppState } from './state.ts';

// Every answer is private to its caller (memories, tokens, sessions), so nothing may be kept by a shared or
// browser cache unless a route says otherwise; `nosniff` keeps browsers from reading JSON or an export as
// script or HTML.
export const securityHeaders: Middleware<AppState> = async (ctx, next) => {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', 'no-store');
  await next();
};
