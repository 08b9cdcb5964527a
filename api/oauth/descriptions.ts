// The OpenAPI document's longer prose for the routes of api/oauth/, kept out of the route definitions.
import { CLIENT_REGISTRATIONS_PER_CLIENT } from '../../domain/accounts/public-throttle.ts';

export const getOauthAuthorize =
  'Without a dashboard session, redirects (302) to /dashboard/signin, which comes back here. With one, answers ' +
  'the consent page naming the client, where it returns, and the org the session acts in. An unknown `client_id` ' +
  '(400 `invalid_client`) or a `redirect_uri` the client did not register (400 `invalid_request`) is answered ' +
  'here; other problems (`unsupported_response_type`, `invalid_request` for a missing or non-S256 challenge, ' +
  '`invalid_target`) go back to the redirect URI with `state` and `iss`.';

export const postOauthAuthorize =
  'A form post from the consent page, with the session cookie (the cross-site rule holds: it must come from this ' +
  'origin). The code lives 60 seconds, is bound to the client, redirect URI, code challenge, user, org and ' +
  'resource, and is exchanged at POST /oauth/token.';

export const postOauthRegister =
  'Redirect URIs are https, or http to a loopback address (127.0.0.1, localhost, [::1]; any port at ' +
  "authorization time, RFC 8252). Errors are OAuth's: `invalid_redirect_uri`, `invalid_client_metadata` (400).";

export const postOauthRegister429 =
  `\`too_many_requests\`: ${CLIENT_REGISTRATIONS_PER_CLIENT} registrations per client address an hour; ` + `Retry-After in seconds`;

export const postOauthRegister503 =
  '`temporarily_unavailable`: OAUTH_CLIENTS_MAX registrations are stored (unused ones are swept after a day)';

export const postOauthToken =
  'A form (application/x-www-form-urlencoded), as OAuth has it. Public clients send `client_id` and no secret. A ' +
  'code works once: presented again, the token issued for it is revoked. A refresh token works once too: each ' +
  'refresh answers a new access token and refresh token, and one already replaced, presented again, revokes the ' +
  "grant. Revoking the API token on the tokens page ends both. Errors are OAuth's: `invalid_request`, " +
  '`invalid_grant`, `invalid_target`, `unsupported_grant_type` (400), `invalid_client` (401).';

export const postOauthToken400 =
  '`invalid_request`, `invalid_grant`, `invalid_target` or `unsupported_grant_type`, with `error_description`';
