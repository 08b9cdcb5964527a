// The MCP server for desktop agents, over stdio: the same tools as /mcp, each one call of the service's
// public API at MEMORY_SERVICE_URL with the token in MEMORY_SERVICE_TOKEN (none needed in local mode).
// Run it as `node api/mcp/stdio-main.ts`; stdout is the protocol's, so diagnostics go to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createMcpServer, type ApiCall } from './tools.ts';

const baseUrl = (process.env.MEMORY_SERVICE_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
const token = process.env.MEMORY_SERVICE_TOKEN;

const call: ApiCall = async (method, path, body) => {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, retryAfter: res.headers.get('retry-after') ?? undefined };
};

const server = createMcpServer(call);
await server.connect(new StdioServerTransport());
process.stderr.write(`memory-service MCP server on stdio, calling ${baseUrl}\n`);
