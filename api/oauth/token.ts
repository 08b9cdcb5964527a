import { z } from 'zod';
import { findClient } from '../../domain/oauth/clients.ts';
import { exchangeCode } from '../../domain/oauth/codes.ts';
import { oauthError } from '../../domain/oauth/errors.ts';
import { refreshGrant, type GrantLifetimes, type IssuedGrant } from '../../domain/oauth/grants.ts';
import type { Config } from '../../infra/config.ts';
import { MCP_PATH } from '../mcp/endpoint.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { resourceAllowed } from './authorization-request.ts';
import { TOKEN_PATH } from './metadata.ts';
import { postOauthToken, postOauthToken400 } from './descriptions.ts';

// Both grants' parameters (RFC 6749 4.1.3 and 6, PKCE, RFC 8707), loose: what is missing or wrong is answered in
// OAuth's terms by the handler.
const tokenForm = z.object({
  grant_type: z.string().max(100).optional(),
  client_id: z.string().max(200).optional(),
  code: z.string().max(200).optional(),
  code_verifier: z.string().max(200).optional(),
  redirect_uri: z.string().max(2000).optional(),
  refresh_token: z.string().max(200).optional(),
  resource: z.string().max(2000).optional(),
  scope: z.string().max(1000).optional(),
});

const tokenResponse = z
  .object({
    access_token: z.string().meta({
      description: 'an API token of the consenting user in their org (`svc_...`), listed on the tokens page as "OAuth: <client_name>"',
    }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().meta({ description: 'seconds (OAUTH_ACCESS_TOKEN_TTL_SECONDS)' }),
    refresh_token: z.string().meta({ description: 'single use: each refresh answers a new one (OAUTH_REFRESH_TOKEN_TTL_DAYS)' }),
    scope: z.string(),
  })
  .meta({ id: 'OAuthTokens' });

const required = (value: string | undefined, name: string): string => {
  if (!value) throw oauthError('invalid_request', `${name} is required`);
  return value;
};

export function tokenEndpointRoutes(config: Config): AnyRoute[] {
  const issuer = config.publicBaseUrl;
  const lifetimes: GrantLifetimes = {
    accessSeconds: config.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
    refreshDays: config.OAUTH_REFRESH_TOKEN_TTL_DAYS,
  };
  return [
    defineRoute({
      method: 'post',
      path: TOKEN_PATH,
      tag: 'oauth',
      access: 'public',
      summary: 'Exchange an authorization code (with its PKCE verifier) or a refresh token for tokens',
      description: postOauthToken,
      body: tokenForm,
      bodyType: 'form',
      bodyLimit: '16kb',
      bodyError: () => 'invalid_request',
      responses: {
        200: { description: 'Tokens', schema: tokenResponse },
        400: { description: postOauthToken400 },
        401: { description: '`invalid_client`: client_id names no registered client' },
      },
      handler: async (ctx, { body }) => {
        const grantType = required(body.grant_type, 'grant_type');
        if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
          throw oauthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
        }
        const client = await findClient(ctx.state.em, required(body.client_id, 'client_id'));
        if (!client) throw oauthError('invalid_client', 'client_id names no client registered here', 'unauthenticated');
        if (body.resource !== undefined && !resourceAllowed(body.resource, issuer))
          throw oauthError('invalid_target', `resource must be ${issuer}${MCP_PATH} or ${issuer}`);
        const grant: IssuedGrant =
          grantType === 'authorization_code'
            ? await exchangeCode(
                ctx.state.em,
                {
                  code: required(body.code, 'code'),
                  clientId: client.id,
                  clientName: client.name,
                  redirectUri: required(body.redirect_uri, 'redirect_uri'),
                  codeVerifier: required(body.code_verifier, 'code_verifier'),
                  resource: body.resource ?? null,
                },
                lifetimes,
              )
            : await refreshGrant(
                ctx.state.em,
                { refreshToken: required(body.refresh_token, 'refresh_token'), clientId: client.id },
                lifetimes,
              );
        ctx.set('Pragma', 'no-cache');
        ctx.body = {
          access_token: grant.accessToken,
          token_type: 'Bearer',
          expires_in: grant.expiresIn,
          refresh_token: grant.refreshToken,
          scope: grant.scope,
        };
      },
    }),
  ];
}
