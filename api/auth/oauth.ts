import { throttleIdentityProviderStart } from '../../domain/accounts/public-throttle.ts';
import { z } from 'zod';
import { signInWithIdentity, rememberAuthorization, takeAuthorization, OAUTH_REQUEST_TTL_MS } from '../../domain/accounts/identity.ts';
import { AppError, invalid } from '../../domain/errors.ts';
import type { OidcClient } from '../../infra/oidc.ts';
import { OIDC_CALLBACK_PATH, type ApiDeps } from '../deps.ts';
import { setSessionCookie } from '../http/cookies.ts';
import { isAuthorizationReturn } from '../oauth/metadata.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import type { AppContext } from '../http/state.ts';
import { getAuthOauthIdpStart429, getAuthOauthIdpCallback } from './descriptions.ts';

const STATE_COOKIE = 'svc_oauth_state';
// Where to go once signed in when the sign-in began on the way to an OAuth consent page (api/oauth/authorize.ts).
const RETURN_COOKIE = 'svc_oauth_return';

export function oauthRoutes(deps: ApiDeps): AnyRoute[] {
  const { config } = deps;
  const { oidc } = deps.clients;
  const configured = (): OidcClient => {
    if (!oidc)
      throw new AppError(
        'not_found',
        'oauth_not_configured',
        'no identity provider is configured (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET)',
      );
    return oidc;
  };
  // The state also travels in a cookie, so a callback is accepted only in the browser that started it.
  const cookie = (ctx: AppContext, name: string, value: string, maxAge: number) =>
    ctx.cookies.set(name, value, { httpOnly: true, sameSite: 'lax', path: '/api/auth/oauth', maxAge, overwrite: true });
  const stateCookie = (ctx: AppContext, value: string, maxAge: number) => cookie(ctx, STATE_COOKIE, value, maxAge);

  return [
    defineRoute({
      method: 'get',
      path: '/api/auth/methods',
      tag: 'auth',
      access: 'public',
      summary: 'How people can sign in here: e-mail and password always; the identity provider when one is configured',
      responses: {
        200: {
          description: 'Sign-in methods',
          schema: z.object({
            password: z.literal(true),
            identity_provider: z.boolean().meta({ description: 'GET /api/auth/oauth/idp/start leads to it' }),
          }),
        },
      },
      handler: async (ctx) => {
        ctx.body = { password: true, identity_provider: oidc !== null };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/auth/oauth/idp/start',
      tag: 'auth',
      access: 'public',
      summary: 'Redirect (302) to the external identity provider (authorization code flow with state, nonce and PKCE)',
      query: z.object({
        next: z
          .string()
          .max(4000)
          .optional()
          .meta({ description: 'an `/oauth/authorize?...` path to come back to once signed in (anything else is ignored: /dashboard)' }),
      }),
      responses: {
        302: { description: 'To the provider' },
        404: { description: '`oauth_not_configured`' },
        429: { description: getAuthOauthIdpStart429 },
        503: { description: '`oauth_unavailable`' },
      },
      handler: async (ctx, { query }) => {
        const client = configured();
        await throttleIdentityProviderStart(ctx.state.em, ctx.ip);
        const started = await client.start();
        await rememberAuthorization(ctx.state.em, started.state, started.pending);
        stateCookie(ctx, started.state, OAUTH_REQUEST_TTL_MS);
        if (query.next && isAuthorizationReturn(query.next))
          cookie(ctx, RETURN_COOKIE, Buffer.from(query.next).toString('base64url'), OAUTH_REQUEST_TTL_MS);
        ctx.redirect(started.url.href);
      },
    }),
    defineRoute({
      method: 'get',
      path: OIDC_CALLBACK_PATH,
      tag: 'auth',
      access: 'public',
      summary:
        'Where the provider sends the user back: signs in or creates the user, sets the session cookie, redirects to ' +
        '/dashboard (or to the OAuth authorization the sign-in began on)',
      description: getAuthOauthIdpCallback,
      query: z
        .object({ state: z.string().max(500).optional(), code: z.string().max(2000).optional(), error: z.string().max(200).optional() })
        .catchall(z.string().max(500)),
      responses: {
        302: { description: 'Signed in; to /dashboard' },
        400: { description: '`invalid_state` or `oauth_failed`' },
        404: { description: '`oauth_not_configured`' },
      },
      handler: async (ctx, { query }) => {
        const client = configured();
        if (query.error) throw invalid('oauth_failed', `the identity provider answered ${query.error}`);
        const expected = ctx.cookies.get(STATE_COOKIE);
        if (!query.state || !expected || query.state !== expected)
          throw invalid('invalid_state', 'the sign-in was not started in this browser, or has expired; start again');
        const pending = await takeAuthorization(ctx.state.em, query.state);
        stateCookie(ctx, '', 0);
        const identity = await client.finish(new URL(`${config.publicBaseUrl}${ctx.path}?${ctx.querystring}`), query.state, pending);
        const session = await signInWithIdentity(ctx.state.em, identity);
        setSessionCookie(ctx, config, session.sessionSecret, session.expiresAt);
        const back = Buffer.from(ctx.cookies.get(RETURN_COOKIE) ?? '', 'base64url').toString();
        if (back) cookie(ctx, RETURN_COOKIE, '', 0);
        ctx.redirect(`${config.publicBaseUrl}${isAuthorizationReturn(back) ? back : '/dashboard'}`);
      },
    }),
  ];
}
