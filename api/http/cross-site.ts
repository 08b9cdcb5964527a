import type { Middleware } from 'koa';
import { AppError } from '../../domain/errors.ts';
import type { AppContext, AppState } from './state.ts';

// A cookie (or local mode, where the browser needs no credential at all) is sent by the browser on its own,
// so a write that rides on it must come from this service's own pages. Browsers say where a request comes
// from in Sec-Fetch-Site and Origin; a client that sends neither is not a browser and cannot be tricked
// into a cross-site request. Bearer tokens are never sent on their own and are not checked.
// Applied to writes only (route.ts `write`), and to /mcp: a POST that only reads, such as a search, changes nothing.
export function crossSiteAllowed(ctx: AppContext, trustedOrigin: string): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site === 'same-origin' || site === 'none') return true;
  const origin = ctx.get('origin');
  if (!origin) return site === '';
  // Koa 3's ctx.origin is the Origin header itself; the service's own origin is built from protocol and host.
  return origin === trustedOrigin || origin === `${ctx.protocol}://${ctx.host}`;
}

export function refuseCrossSiteWrites(publicBaseUrl: string): Middleware<AppState> {
  const trustedOrigin = new URL(publicBaseUrl).origin;
  return async (ctx, next) => {
    const kind = ctx.state.caller?.credentialKind;
    if ((kind === 'session' || kind === 'local') && !crossSiteAllowed(ctx, trustedOrigin)) {
      throw new AppError(
        'forbidden',
        'cross_site_request',
        `a write or MCP call with a session cookie must come from ${trustedOrigin} itself (Origin or Sec-Fetch-Site says ` +
          `otherwise); other clients send a bearer token`,
      );
    }
    await next();
  };
}
