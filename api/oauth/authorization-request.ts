import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { findClient, type OAuthClient } from '../../domain/oauth/clients.ts';
import { oauthError } from '../../domain/oauth/errors.ts';
import { CODE_CHALLENGE } from '../../domain/oauth/pkce.ts';
import { redirectUriMatches } from '../../domain/oauth/redirect-uris.ts';
import { MCP_PATH } from '../mcp/endpoint.ts';
import { OAUTH_SCOPE } from './metadata.ts';

// The authorization request's parameters (RFC 6749 4.1.1, PKCE, RFC 8707's resource), as the query of
// GET /oauth/authorize and again as the consent form's fields. Loose on purpose: what is wrong is answered in
// OAuth's terms below, not as a validation failure.
export const authorizationParams = z.object({
  response_type: z.string().max(100).optional(),
  client_id: z.string().max(200).optional(),
  redirect_uri: z.string().max(2000).optional(),
  state: z.string().max(2000).optional(),
  code_challenge: z.string().max(200).optional(),
  code_challenge_method: z.string().max(100).optional(),
  resource: z.string().max(2000).optional(),
  scope: z.string().max(1000).optional(),
});
export type AuthorizationParams = z.infer<typeof authorizationParams>;

export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  resource: string | null;
  scope: string;
}

// The client's redirect URI with OAuth's answer added to its query, and `iss` (RFC 9207), so a client talking to
// several servers knows which one answered.
export function redirectWith(redirectUri: string, issuer: string, answer: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries({ ...answer, iss: issuer })) if (value !== undefined) url.searchParams.append(key, value);
  return url.href;
}

// The resources a token may be asked for (RFC 8707): the MCP endpoint, or the whole service.
export const resourceAllowed = (resource: string, issuer: string): boolean =>
  [`${issuer}${MCP_PATH}`, issuer, `${issuer}/`].includes(resource);

// A bad client or redirect URI is told to the person, never sent on to that URI (RFC 6749 4.1.2.1); once both are
// good, every other problem goes back to the client at its redirect URI.
export async function checkAuthorizationRequest(
  em: EntityManager,
  params: AuthorizationParams,
  issuer: string,
): Promise<AuthorizationRequest | { redirect: string }> {
  const client = params.client_id ? await findClient(em, params.client_id) : null;
  if (!client) throw oauthError('invalid_client', 'client_id names no client registered here (POST /oauth/register)');
  const redirectUri = params.redirect_uri;
  if (!redirectUri || !client.redirectUris.some((registered) => redirectUriMatches(registered, redirectUri))) {
    throw oauthError('invalid_request', redirectUri ? 'redirect_uri is not one the client registered' : 'redirect_uri is required');
  }
  const refuse = (error: string, description: string) => ({
    redirect: redirectWith(redirectUri, issuer, { error, error_description: description, state: params.state }),
  });
  if (params.response_type !== 'code') return refuse('unsupported_response_type', 'response_type must be code');
  if (params.code_challenge_method !== 'S256') return refuse('invalid_request', 'PKCE is required, with code_challenge_method S256');
  if (!params.code_challenge || !CODE_CHALLENGE.test(params.code_challenge))
    return refuse('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier');
  if (params.resource !== undefined && !resourceAllowed(params.resource, issuer))
    return refuse('invalid_target', `resource must be ${issuer}${MCP_PATH} or ${issuer}`);
  // One scope exists; whatever else is asked is left out of the grant, which says what it holds (RFC 6749 3.3).
  return {
    client,
    redirectUri,
    state: params.state,
    codeChallenge: params.code_challenge,
    resource: params.resource ?? null,
    scope: OAUTH_SCOPE,
  };
}
