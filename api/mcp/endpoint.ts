import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import { inject } from 'light-my-request';
import type { Caller } from '../../domain/accounts/caller.ts';
import { AppError, unauthenticated } from '../../domain/errors.ts';
import { resolveCaller } from '../http/auth.ts';
import { crossSiteAllowed } from '../http/cross-site.ts';
import type { AppState } from '../http/state.ts';
import { createMcpServer, type ApiCall } from './tools.ts';

export const MCP_PATH = '/mcp';

// The MCP server over Streamable HTTP, stateless: each request gets a server whose tools call this same
// app's public routes in-process (light-my-request, no socket), with the request's own credential. So an
// MCP call is authenticated, rate-limited and answered exactly as the API is.
export function mcpEndpoint(app: Koa<AppState>, publicBaseUrl: string, localCaller: Caller | null): Middleware<AppState> {
  // Built on first use: the app's middleware is complete only once createApp has added all of it.
  let handler: ReturnType<Koa<AppState>['callback']> | undefined;
  const trustedOrigin = new URL(publicBaseUrl).origin;
  return async (ctx, next) => {
    if (ctx.path !== MCP_PATH) return next();
    const caller = localCaller ?? (await resolveCaller(ctx));
    if (!caller) throw unauthenticated();
    if ((caller.credentialKind === 'session' || caller.credentialKind === 'local') && ctx.method !== 'GET' && !crossSiteAllowed(ctx, trustedOrigin)) {
      throw new AppError('forbidden', 'cross_site_request', `an MCP call with a session cookie must come from ${trustedOrigin} itself`);
    }
    ctx.state.caller = caller;
    const credential = { ...(ctx.get('authorization') ? { authorization: ctx.get('authorization') } : {}), ...(ctx.get('cookie') ? { cookie: ctx.get('cookie') } : {}) };
    const call: ApiCall = async (method, path, body) => {
      handler ??= app.callback();
      const res = await inject(handler, {
        method,
        url: path,
        headers: { ...credential, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      const retryAfter = res.headers['retry-after'];
      return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined, retryAfter: retryAfter === undefined ? undefined : String(retryAfter) };
    };
    const server = createMcpServer(call);
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    ctx.respond = false;
    ctx.res.on('close', () => void server.close());
    await transport.handleRequest(ctx.req, ctx.res);
  };
}
