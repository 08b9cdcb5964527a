import { z } from 'zod';
import { createToken, listTokens, revokeToken } from '../../domain/accounts/tokens.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { issuedTokenJson, issuedTokenSchema, tokenJson, tokenSchema } from './schemas.ts';

export function tokenRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/auth/tokens',
      tag: 'tokens',
      access: 'caller',
      summary: 'List API tokens (owners and admins see every token of the org, members their own)',
      responses: { 200: { description: 'Tokens; hashes and raw values are never returned', schema: z.array(tokenSchema) } },
      handler: async (ctx) => {
        ctx.body = (await listTokens(ctx.state.em, callerOf(ctx))).map(tokenJson);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/tokens',
      tag: 'tokens',
      access: 'caller',
      summary: 'Issue an API token bound to the current org; the raw value is shown only here',
      body: z.object({
        name: z.string().trim().min(1).max(200).optional(),
        expires_in_days: z.number().int().min(1).max(3650).optional().meta({ description: 'omit for a token that does not expire' }),
      }),
      responses: {
        201: { description: 'Token issued', schema: issuedTokenSchema },
        409: { description: '`token_limit`: the caller holds 100 live API tokens in this org' },
      },
      handler: async (ctx, { body }) => {
        const token = await createToken(ctx.state.em, callerOf(ctx), { name: body.name, expiresInDays: body.expires_in_days });
        ctx.status = 201;
        ctx.body = issuedTokenJson(token);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/auth/tokens/:id',
      tag: 'tokens',
      access: 'caller',
      summary: 'Revoke an API token; the next request with it gets 401',
      params: z.object({ id: z.uuid() }),
      responses: {
        204: { description: 'Revoked' },
        403: { description: "Another member's token, and the caller is not an owner or admin" },
        404: { description: 'No such token in this org' },
      },
      handler: async (ctx, { params }) => {
        await revokeToken(ctx.state.em, callerOf(ctx), params.id);
        ctx.status = 204;
      },
    }),
  ];
}
