// The MCP server for desktop agents, over stdio: the same tools as the service's /mcp (api/mcp/tools.ts, bundled
// in), each one call of the service's public API at MEMORY_SERVICE_URL with the token in MEMORY_SERVICE_TOKEN (none
// needed in local mode). stdout is the protocol's, so what it says goes to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { ApiCall } from '../../../api/mcp/api-call.ts';
import { createMcpServer } from '../../../api/mcp/tools.ts';

const baseUrl = (process.env.MEMORY_SERVICE_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
const token = process.env.MEMORY_SERVICE_TOKEN;

const call: ApiCall = async (method, path, body) => {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, retryAfter: res.headers.get('retry-after') ?? undefined };
};

// One line on stderr and exit 1, before any protocol: an agent's host shows it, where a tool error would come later.
function refuse(reason: string): never {
  process.stderr.write(`memory-service-mcp: ${reason}\n`);
  process.exit(1);
}

// The token checked once at start, by the account it belongs to, so a wrong one stops here and not at the first call.
async function whoAmI(): Promise<string> {
  const answer = await call('GET', '/api/auth/me').catch((err: Error) =>
    refuse(
      err instanceof SyntaxError
        ? `${baseUrl} did not answer JSON: is MEMORY_SERVICE_URL the memory service?`
        : `cannot reach ${baseUrl} (${(err.cause as Error | undefined)?.message ?? err.message})`,
    ),
  );
  if (answer.status === 401) refuse(`${baseUrl} refused the token: set MEMORY_SERVICE_TOKEN to an API token of your account (svc_...)`);
  if (answer.status >= 400) refuse(`${baseUrl}/api/auth/me answered ${answer.status}: is MEMORY_SERVICE_URL the memory service?`);
  const account = answer.body as { user: { email: string }; org: { name: string } };
  return `${account.user.email} in ${account.org.name}`;
}

const account = await whoAmI();
await createMcpServer(call).connect(new StdioServerTransport());
process.stderr.write(`memory-service MCP server on stdio, calling ${baseUrl} as ${account}\n`);
