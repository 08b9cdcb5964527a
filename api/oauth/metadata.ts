import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/route.ts';

// The service is the authorization server of its own MCP endpoint (the MCP authorization spec): its accounts sign
// people in, and what a client is granted is an API token of the consenting user in their session's org.
const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';
export const AUTHORIZE_PATH = '/oauth/authorize';
export const TOKEN_PATH = '/oauth/token';
export const REGISTER_PATH = '/oauth/register';
// A sign-in that began on the way to the consent page goes back there, and only there: no link can make it a redirect elsewhere.
export const isAuthorizationReturn = (path: string): boolean => path.startsWith(`${AUTHORIZE_PATH}?`);
// One scope: the token acts as the user, with their role, in one org, on /mcp and the API alike.
export const OAUTH_SCOPE = 'memory';

const authorizationServerMetadata = z
  .object({
    issuer: z.url().meta({ description: 'PUBLIC_BASE_URL' }),
    authorization_endpoint: z.url(),
    token_endpoint: z.url(),
    registration_endpoint: z.url(),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.literal('code')),
    response_modes_supported: z.array(z.literal('query')),
    grant_types_supported: z.array(z.enum(['authorization_code', 'refresh_token'])),
    token_endpoint_auth_methods_supported: z
      .array(z.literal('none'))
      .meta({ description: 'public clients only: PKCE proves who exchanges a code' }),
    code_challenge_methods_supported: z.array(z.literal('S256')),
    authorization_response_iss_parameter_supported: z.literal(true).meta({ description: 'the redirect carries `iss` (RFC 9207)' }),
  })
  .meta({ id: 'AuthorizationServerMetadata' });

export function authorizationServerRoutes(issuer: string): AnyRoute[] {
  const document: z.infer<typeof authorizationServerMetadata> = {
    issuer,
    authorization_endpoint: `${issuer}${AUTHORIZE_PATH}`,
    token_endpoint: `${issuer}${TOKEN_PATH}`,
    registration_endpoint: `${issuer}${REGISTER_PATH}`,
    scopes_supported: [OAUTH_SCOPE],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  };
  return [
    defineRoute({
      method: 'get',
      path: AUTHORIZATION_SERVER_METADATA_PATH,
      tag: 'oauth',
      access: 'public',
      summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
      responses: { 200: { description: 'The metadata', schema: authorizationServerMetadata } },
      handler: async (ctx) => {
        ctx.body = document;
      },
    }),
  ];
}
