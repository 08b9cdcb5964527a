import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import { inject } from 'light-my-request';
import type { AppState } from '../http/state.ts';
import { createMcpServer, type ApiCall } from './tools.ts';

export const MCP_PATH = '/mcp';

// The MCP server over Streamable HTTP, stateless: each request gets a server whose tools call this same
// app's public routes in-process (light-my-request, no socket), with the request's own credential. So an
// MCP call is authenticated, rate-limited and answered exactly as the API is. Registered behind the same
// caller resolution and cross-site check as every route (app.ts).
export function mcpHandler(app: Koa<AppState>): Middleware<AppState> {
  // Built on first use: the app's middleware is complete only once createApp has added all of it.
  let handler: ReturnType<Koa<AppState>['callback']> | undefined;
  return async (ctx) => {
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
