// The OpenAPI document's longer prose for the routes of api/auth/, kept out of the route definitions.
import { IDP_STARTS_PER_CLIENT } from '../../domain/accounts/public-throttle.ts';

export const getAuthOauthIdpStart429 =
  `\`too_many_requests\`: ${IDP_STARTS_PER_CLIENT} sign-ins started per client address in 15 minutes; ` + `Retry-After in seconds`;

export const getAuthOauthIdpCallback =
  'Links by the provider identity first, then by a verified e-mail; otherwise creates a user with an org of ' +
  'their own. A bad or replayed state is 400 `invalid_state`; a code the provider refuses (for example a ' +
  'replayed one) is 400 `oauth_failed`.';

export const postAuthSignup =
  'Runs as the `signup-<org id>` workflow: one transaction creates the user, the org (caller as owner), a ' +
  'default API token and a session; the answer comes as soon as it commits, and the verification mail follows in ' +
  'the background. Sets the `svc_session` cookie.';

export const postAuthSignup429 =
  '`too_many_requests`: SIGNUPS_PER_ADDRESS_PER_HOUR (default 20) sign-ups per client address an hour; ' + 'Retry-After in seconds';

export const postAuthLogin =
  'Without `org_id` the session acts in the org the user used last. With `org_id` it acts in that org (403 when ' + 'not a member).';

export const postAuthLogin429 =
  '`too_many_attempts`: 10 failed attempts on one account from one client address, or 50 attempts from one ' +
  'client address, in 15 minutes; Retry-After in seconds';

export const deleteAuthMe =
  'Orgs where the user is the only member are deleted with all their data; in orgs with other members the user ' +
  'leaves. When the user is the only owner of an org that has other members, nothing is deleted (409 ' +
  '`sole_owner`): make another member owner first. An account without a password (signed up through the identity ' +
  'provider) sends `confirm_email` instead, from a cookie session less than 15 minutes old (a fresh sign-in ' +
  'through the provider).';

export const deleteAuthMe403 =
  '`password_mismatch`; for an account without a password `reauthentication_required` (the session is older than ' +
  '15 minutes, or not a session) or `email_mismatch`';

// Both routes that take a mailed token, verify-email and reset-consume.
export const tokenUse429 =
  '`too_many_requests`: 30 token attempts (verify-email and reset-consume together) per client address in 15 ' + 'minutes';

export const postAuthResetRequest =
  'Both cases do the same work (one queued job), so neither the answer nor its timing tells whether the account ' + 'exists.';

export const postAuthResetRequest429 =
  '`too_many_requests`: 3 per address per hour, or 10 mail requests per client address in 15 minutes; ' + 'Retry-After in seconds';

export const postAuthResendVerification =
  'Queued through the outbox and sent by the `verification-mail-<id>` workflow; counts toward the write rate ' + 'limit.';

export const postAuthResendVerification429 =
  '`too_many_requests`: 3 per account per hour, or 10 mail requests per client address in 15 minutes; ' + 'Retry-After in seconds';
