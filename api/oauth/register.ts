import { z } from 'zod';
import { throttleClientRegistration } from '../../domain/accounts/public-throttle.ts';
import { registerClient } from '../../domain/oauth/clients.ts';
import { oauthError } from '../../domain/oauth/errors.ts';
import type { Config } from '../../infra/config.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { REGISTER_PATH } from './metadata.ts';
import { postOauthRegister, postOauthRegister429, postOauthRegister503 } from './descriptions.ts';

const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

// RFC 7591's request; members we do not use (client_uri, logo_uri, contacts, software_id...) are ignored.
const registrationBody = z.object({
  redirect_uris: z.array(z.string().max(2000)).min(1).max(10),
  client_name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'shown on the consent page and in the API token\'s name ("OAuth: <client_name>")' }),
  token_endpoint_auth_method: z
    .string()
    .max(100)
    .optional()
    .meta({ description: 'answered as `none` whatever is asked: clients are public' }),
  grant_types: z.array(z.string().max(100)).max(10).optional(),
  response_types: z.array(z.string().max(100)).max(10).optional(),
  scope: z.string().max(1000).optional(),
});

const registeredClient = z
  .object({
    client_id: z.uuid(),
    client_id_issued_at: z.number().int().meta({ description: 'epoch seconds' }),
    client_name: z.string(),
    redirect_uris: z.array(z.string()),
    grant_types: z.array(z.enum(GRANT_TYPES)),
    response_types: z.array(z.literal('code')),
    token_endpoint_auth_method: z.literal('none'),
  })
  .meta({ id: 'OAuthClient' });

export function registrationRoutes(config: Config): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: REGISTER_PATH,
      tag: 'oauth',
      access: 'public',
      summary: 'Register an OAuth client (RFC 7591 dynamic client registration): a public client that uses PKCE',
      description: postOauthRegister,
      body: registrationBody,
      bodyLimit: '64kb',
      bodyError: () => 'invalid_client_metadata',
      responses: {
        201: { description: 'Registered', schema: registeredClient },
        400: { description: '`invalid_redirect_uri` or `invalid_client_metadata`' },
        429: { description: postOauthRegister429 },
        503: { description: postOauthRegister503 },
      },
      handler: async (ctx, { body }) => {
        const unsupported = [
          ...(body.grant_types ?? []).filter((g) => !(GRANT_TYPES as readonly string[]).includes(g)),
          ...(body.response_types ?? []).filter((r) => r !== 'code'),
        ];
        if (unsupported.length > 0)
          throw oauthError(
            'invalid_client_metadata',
            `not supported here: ${unsupported.join(', ')} (authorization_code with PKCE, refresh_token and response type code are)`,
          );
        await throttleClientRegistration(ctx.state.em, ctx.ip);
        const client = await registerClient(
          ctx.state.em,
          { name: body.client_name, redirectUris: body.redirect_uris },
          config.OAUTH_CLIENTS_MAX,
        );
        ctx.status = 201;
        ctx.body = {
          client_id: client.id,
          client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
          client_name: client.name,
          redirect_uris: client.redirectUris,
          grant_types: [...GRANT_TYPES],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        };
      },
    }),
  ];
}
