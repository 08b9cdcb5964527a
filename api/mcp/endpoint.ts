import { AsyncLocalStorage } from 'node:async_hooks';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import { inject } from 'light-my-request';
import { AppError } from '../../domain/errors.ts';
import { actAs, callerOf } from '../http/auth.ts';
import type { AppContext, AppState } from '../http/state.ts';
import type { ApiCall } from './api-call.ts';
import { serialCalls } from './serial-calls.ts';
import { createMcpServer } from './tools.ts';

export const MCP_PATH = '/mcp';
// A tool call carries at most one memory (256 KiB of content, escaped) and its metadata.
const MCP_BODY_LIMIT = 2 * 1024 * 1024;
// Idle servers kept for the next requests: about as many as MCP requests run at once.
const IDLE_SERVERS = 16;

// The MCP server over Streamable HTTP, stateless: each request gets a server whose tools call this same
// app's public routes in-process (light-my-request, no socket) as the caller this request was
// authenticated as. So an MCP call is validated, rate-limited and answered exactly as the API is, without
// a second credential lookup. Registered behind the same caller resolution and cross-site check as every
// route (app.ts). The SDK's Web-standard transport is driven directly: its Node adapter converts every
// request and response through streams. A transport serves one request, but a server can be connected
// to the next one once closed: servers are kept and reused (building one, with its tools' schemas, cost
// more than the rest of a request), each serving one request at a time, whose API calls it finds in
// `requestCall`.
export function mcpHandler(app: Koa<AppState>): Middleware<AppState> {
  // Built on first use: the app's middleware is complete only once createApp has added all of it.
  let handler: ReturnType<Koa<AppState>['callback']> | undefined;
  const requestCall = new AsyncLocalStorage<ApiCall>();
  const idle: McpServer[] = [];
  const serverCall: ApiCall = (method, path, body) => requestCall.getStore()!(method, path, body);
  return async (ctx) => {
    // Stateless: no session, so no stream of server notifications to GET and nothing to DELETE.
    if (ctx.method !== 'POST') {
      ctx.status = 405;
      ctx.set('Allow', 'POST');
      ctx.body = { jsonrpc: '2.0', error: { code: -32000, message: 'this server is stateless: send each request as a POST' }, id: null };
      return;
    }
    const caller = callerOf(ctx);
    const callApi: ApiCall = async (method, path, body) => {
      const dispatch = (handler ??= app.callback());
      const res = await inject(
        (req, res) => {
          actAs(req, caller);
          void dispatch(req, res);
        },
        {
          method,
          url: path,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        },
      );
      const retryAfter = res.headers['retry-after'];
      return {
        status: res.statusCode,
        body: res.body ? JSON.parse(res.body) : undefined,
        retryAfter: retryAfter === undefined ? undefined : String(retryAfter),
      };
    };
    const { request, parsedBody } = await webRequestOf(ctx);
    const server = idle.pop() ?? createMcpServer(serverCall);
    try {
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      const handled = () => transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody });
      const response = await requestCall.run(serialCalls(callApi), handled);
      ctx.status = response.status;
      response.headers.forEach((value, name) => ctx.set(name, value));
      // JSON responses are enabled, so a POST is answered with one body (a notification, with none).
      ctx.body = response.body ? await response.text() : null;
    } finally {
      // Closed (and free for the next request) once the answer is on its way, not before.
      setImmediate(() => void server.close().then(() => idle.length < IDLE_SERVERS && idle.push(server)));
    }
  };
}

// The POST as a Web `Request`, its JSON already parsed when it parses (a body that does not is left to
// the transport, which answers with JSON-RPC's parse error).
async function webRequestOf(ctx: AppContext): Promise<{ request: Request; parsedBody: unknown }> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  const url = `http://${ctx.host || 'localhost'}${ctx.originalUrl}`;
  const text = await readBody(ctx);
  try {
    // Parsed, the body travels beside the request, which then needs none of its own.
    return { request: new Request(url, { method: 'POST', headers }), parsedBody: JSON.parse(text) };
  } catch {
    return { request: new Request(url, { method: 'POST', headers, body: text }), parsedBody: undefined };
  }
}

// Past the limit the rest is read and dropped (up to four times the limit), so that the client, still
// sending, gets the 413 rather than a reset connection.
async function readBody(ctx: AppContext): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MCP_BODY_LIMIT) chunks.push(chunk);
    else if (size > 4 * MCP_BODY_LIMIT) break;
  }
  if (size > MCP_BODY_LIMIT) throw new AppError('too_large', 'payload_too_large', `an MCP request is at most ${MCP_BODY_LIMIT} bytes`);
  return Buffer.concat(chunks).toString('utf8');
}
