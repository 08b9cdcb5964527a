import type { Middleware } from 'koa';
import type { AnyRoute } from './route.ts';
import type { AppState } from './state.ts';

// Test-time guard: a success body that does not match the route's declared schema is a bug in the
// route or in its OpenAPI description, so fail loudly instead of documenting something untrue.
export function checkResponses(route: AnyRoute): Middleware<AppState> {
  return async (ctx, next) => {
    await next();
    const spec = route.responses[ctx.status];
    if (!spec?.schema || ctx.status >= 400) return;
    const result = spec.schema.safeParse(ctx.body);
    if (!result.success) {
      throw new Error(
        `${route.method.toUpperCase()} ${route.path} answered ${ctx.status} with a body outside its schema: ${result.error.message}`,
      );
    }
  };
}
