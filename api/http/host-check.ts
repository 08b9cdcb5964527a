import type { Middleware } from 'koa';
import { AppError } from '../../domain/errors.ts';
import { crossSiteAllowed } from './cross-site.ts';
import type { AppContext, AppState } from './state.ts';

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

// The Host values that name the public address: with and without its default port.
function publicHostsOf(publicBaseUrl: string): string[] {
  const url = new URL(publicBaseUrl);
  return [url.host, `${url.hostname}:${url.port || DEFAULT_PORTS[url.protocol] || ''}`];
}

// An entry `name` allows that name on any port; `name:port` that port alone. Names compare case-insensitively.
function hostAllowed(host: string, publicHosts: readonly string[], allowed: readonly string[]): boolean {
  const wanted = host.toLowerCase();
  if (publicHosts.includes(wanted)) return true;
  const name = wanted.startsWith('[') ? wanted.slice(0, wanted.indexOf(']') + 1) : wanted.split(':')[0]!;
  return allowed.some((entry) => entry === wanted || entry === name);
}

// DNS rebinding: a page whose name comes to point at this server is same-origin to the browser, so only the Host
// it sends gives it away (evil.example pointing at 127.0.0.1 arrives as evil.example). Every request, in every
// mode, must name this service: PUBLIC_BASE_URL's host or one of ALLOWED_HOSTS.
export function refuseUnknownHosts(publicBaseUrl: string, allowed: readonly string[]): Middleware<AppState> {
  const publicHosts = publicHostsOf(publicBaseUrl);
  const entries = allowed.map((entry) => entry.toLowerCase());
  return async (ctx, next) => {
    if (!hostAllowed(ctx.host, publicHosts, entries)) {
      const names = `${publicHosts[0]} (PUBLIC_BASE_URL) and ALLOWED_HOSTS`;
      throw new AppError('forbidden', 'host_not_allowed', `this service answers to ${names} only, not to "${ctx.host}"`);
    }
    await next();
  };
}

// Local mode needs no credential, so a page on another site must not reach it from the browser at all (reads and
// /mcp included, not only writes). A top-level navigation, a link followed to the dashboard, stays allowed: the
// page that made it cannot read the answer. `exempt` names the calls another origin is meant to make (the
// Temporal Web UI's codec calls).
export function refuseOtherSitesLocally(publicBaseUrl: string, exempt: (ctx: AppContext) => boolean): Middleware<AppState> {
  const trustedOrigin = new URL(publicBaseUrl).origin;
  return async (ctx, next) => {
    const navigation = ctx.get('sec-fetch-mode') === 'navigate' && (ctx.method === 'GET' || ctx.method === 'HEAD');
    if (!navigation && !crossSiteAllowed(ctx, trustedOrigin) && !exempt(ctx)) {
      throw new AppError(
        'forbidden',
        'cross_site_request',
        `a browser may call this local instance from ${trustedOrigin} itself only (Origin or Sec-Fetch-Site says otherwise)`,
      );
    }
    await next();
  };
}
