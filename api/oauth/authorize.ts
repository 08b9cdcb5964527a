import { z } from 'zod';
import type { Caller } from '../../domain/accounts/caller.ts';
import { loadAccount } from '../../domain/accounts/sessions.ts';
import { conflict, forbidden, unauthenticated } from '../../domain/errors.ts';
import { issueCode } from '../../domain/oauth/codes.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf, resolveCaller } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import type { AppContext } from '../http/state.ts';
import { authorizationParams, checkAuthorizationRequest, redirectWith } from './authorization-request.ts';
import { consentPage, consentPolicy } from './consent-page.ts';
import { AUTHORIZE_PATH } from './metadata.ts';
import { getOauthAuthorize, postOauthAuthorize } from './descriptions.ts';

// The consent form: the authorization request again, the org the page named, and the person's decision.
const consentForm = authorizationParams.extend({ org_id: z.string().max(100), decision: z.enum(['allow', 'deny']) });

// Consent is given by a person in a browser signed in to the dashboard (or in local mode), never with an API token.
const isBrowserSession = (caller: Caller | null): caller is Caller => caller !== null && caller.credentialKind !== 'api';

export function authorizeRoutes(deps: ApiDeps): AnyRoute[] {
  const issuer = deps.config.publicBaseUrl;
  const seeOther = (ctx: AppContext, location: string) => {
    ctx.redirect(location);
    ctx.status = 303;
  };
  return [
    defineRoute({
      method: 'get',
      path: AUTHORIZE_PATH,
      tag: 'oauth',
      access: 'public',
      summary: 'Start an authorization (code flow with PKCE S256): the consent page, after signing in on the dashboard',
      description: getOauthAuthorize,
      query: authorizationParams,
      responses: {
        200: { description: 'The consent page', contentType: 'text/html' },
        302: { description: 'To the sign-in page, or back to the client with an error' },
        400: { description: '`invalid_client` or `invalid_request` (with `error_description`)' },
      },
      handler: async (ctx, { query }) => {
        const request = await checkAuthorizationRequest(ctx.state.em, query, issuer);
        if ('redirect' in request) return ctx.redirect(request.redirect);
        const caller = deps.localCaller ?? (await resolveCaller(ctx));
        if (!isBrowserSession(caller)) return ctx.redirect(`${issuer}/dashboard/signin?next=${encodeURIComponent(ctx.originalUrl)}`);
        const account = await loadAccount(ctx.state.em, caller.userId, caller.orgId);
        if (!account) throw unauthenticated('revoked_or_expired', "this session's user is no longer a member of its organization");
        ctx.type = 'text/html; charset=utf-8';
        ctx.set('Content-Security-Policy', consentPolicy(request.redirectUri));
        ctx.set('X-Frame-Options', 'DENY');
        ctx.body = consentPage({
          clientName: request.client.name,
          redirectHost: new URL(request.redirectUri).host,
          orgName: account.org.name,
          userEmail: account.user.email,
          action: AUTHORIZE_PATH,
          fields: { ...query, org_id: caller.orgId },
        });
      },
    }),
    defineRoute({
      method: 'post',
      path: AUTHORIZE_PATH,
      tag: 'oauth',
      access: 'caller',
      summary: "The consent page's answer: Allow redirects (303) to the client with a one-time code, Deny with `access_denied`",
      description: postOauthAuthorize,
      body: consentForm,
      bodyType: 'form',
      bodyLimit: '16kb',
      bodyError: () => 'invalid_request',
      responses: {
        303: { description: 'Back to the client: `code` and `state`, or `error=access_denied`; `iss` in both' },
        403: { description: 'An API token cannot give consent' },
        409: { description: '`org_changed`: the session acts in another org than the page named; reload it' },
      },
      handler: async (ctx, { body }) => {
        const caller = callerOf(ctx);
        if (!isBrowserSession(caller)) throw forbidden('consent is given on the consent page by a signed-in person, not with an API token');
        const request = await checkAuthorizationRequest(ctx.state.em, body, issuer);
        if ('redirect' in request) return seeOther(ctx, request.redirect);
        if (body.org_id !== caller.orgId)
          throw conflict(
            'org_changed',
            'the session now acts in another organization than the page named: reload it to see what you are granting',
          );
        if (body.decision === 'deny')
          return seeOther(
            ctx,
            redirectWith(request.redirectUri, issuer, {
              error: 'access_denied',
              error_description: 'the user denied the request',
              state: request.state,
            }),
          );
        const code = await issueCode(ctx.state.em, caller, {
          clientId: request.client.id,
          redirectUri: request.redirectUri,
          codeChallenge: request.codeChallenge,
          resource: request.resource,
          scope: request.scope,
        });
        seeOther(ctx, redirectWith(request.redirectUri, issuer, { code, state: request.state }));
      },
    }),
  ];
}
