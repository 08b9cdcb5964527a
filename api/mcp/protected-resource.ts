import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { OAUTH_SCOPE } from '../oauth/metadata.ts';
import { MCP_PATH } from './endpoint.ts';

// OAuth 2.0 Protected Resource Metadata (RFC 9728) for /mcp, where MCP clients look when a request is refused:
// the 401's WWW-Authenticate names the first URL, and the second is the one RFC 9728 forms for /mcp. Its
// authorization server is the service itself (api/oauth/).
const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

const resourceMetadata = z
  .object({
    resource: z.url().meta({ description: "the MCP endpoint's public URL" }),
    resource_name: z.string(),
    authorization_servers: z
      .array(z.url())
      .meta({ description: 'the service itself (PUBLIC_BASE_URL): its metadata is at /.well-known/oauth-authorization-server' }),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.literal('header')).meta({ description: 'a token is sent as `Authorization: Bearer <token>`' }),
  })
  .meta({ id: 'ProtectedResourceMetadata' });

// The challenge of a refused bearer caller (RFC 6750, with RFC 9728's pointer to the metadata).
export const bearerChallenge = (publicBaseUrl: string): string => `Bearer resource_metadata="${publicBaseUrl}${RESOURCE_METADATA_PATH}"`;

export function protectedResourceRoutes(publicBaseUrl: string): AnyRoute[] {
  const document = {
    resource: `${publicBaseUrl}${MCP_PATH}`,
    resource_name: 'memory-service',
    authorization_servers: [publicBaseUrl],
    scopes_supported: [OAUTH_SCOPE],
    bearer_methods_supported: ['header' as const],
  };
  return [RESOURCE_METADATA_PATH, `${RESOURCE_METADATA_PATH}${MCP_PATH}`].map((path) =>
    defineRoute({
      method: 'get',
      path,
      tag: 'mcp',
      access: 'public',
      summary: 'OAuth protected resource metadata of /mcp (RFC 9728)',
      responses: { 200: { description: 'The metadata', schema: resourceMetadata } },
      handler: async (ctx) => {
        ctx.body = document;
      },
    }),
  );
}
