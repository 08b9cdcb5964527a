// Every `error` code the service answers with: its HTTP status and what it means. AppError takes only these codes (its
// type says so), docs/errors.md is generated from this list (scripts/errors-doc.ts), and test/unit/error-codes.test.ts
// checks the document and that no code in the source is missing here. The contract's codes keep their spelling (`invalid
// json`, `not found`, `rate-limited`, ...); every other one is snake_case.
export interface ErrorCodeInfo {
  // The statuses it comes with; 302 is a redirect to an OAuth client that carries the code in its query.
  status: readonly number[];
  meaning: string;
  // The contract's own code (memory-service-api.md, section 7), spelled as it spells it.
  contract?: true;
  // Where it applies when not to every route (an area of the API, or the answer it is part of).
  area?: string;
}

const code = (
  status: number | readonly number[],
  meaning: string,
  more: Omit<ErrorCodeInfo, 'status' | 'meaning'> = {},
): ErrorCodeInfo => ({
  status: typeof status === 'number' ? [status] : status,
  meaning,
  ...more,
});
const contract = (area?: string): Omit<ErrorCodeInfo, 'status' | 'meaning'> => ({ contract: true, ...(area ? { area } : {}) });

export const ERROR_CODES = {
  // The contract's codes.
  'invalid json': code(400, 'The request body is not valid JSON.', contract()),
  'content required': code(
    400,
    "A memory's `content` is missing, null or blank (a `content` of another type is `validation_failed`).",
    contract('memory saves and updates'),
  ),
  'no patchable fields supplied': code(
    400,
    'An update names none of the fields it could change; also a row of `failed` in PUT /api/memories/batch.',
    contract('updates'),
  ),
  'not found': code(
    404,
    'The object does not exist, or belongs to another org (the two answer alike); `message` names its kind and id: ' +
      '`memory 0b1c… not found`. Also a row of `failed` in PUT /api/memories/batch.',
    contract(),
  ),
  'rate-limited': code(
    429,
    'A rate limit was hit (writes per token, reads per token when configured, exports per org an hour, an org with ' +
      'too many searches waiting); ' +
      '`Retry-After` and `retry_after` give the seconds to wait.',
    contract(),
  ),
  memory_quota_exceeded: code(
    402,
    "The free plan's memory quota is used up; the body has `quota` and `upgrade_url`.",
    contract('memory saves'),
  ),
  storage_quota_exceeded: code(
    402,
    "The free plan's storage quota is used up; the body has `quota` and `upgrade_url`.",
    contract('memory saves'),
  ),
  memory_too_large: code(
    413,
    '`content` is over 262,144 bytes of UTF-8; the body has `max_bytes` and `received_bytes`.',
    contract('memory saves and updates'),
  ),
  unauthorized: code(
    401,
    'No valid credential. `reason` says which case (`no_credential`, `malformed_header`, `unknown_token`, ' +
      '`revoked_or_expired`), and `message` says it in words.',
  ),

  // Any route.
  validation_failed: code(
    400,
    'A field, query parameter or path parameter fails its rules; `issues: [{ path, message }]` names each ' +
      '(`body.tags.0`, `query.limit`, `path.id`).',
  ),
  unknown_field: code(
    400,
    'A body field or query parameter the route does not know; `field` and `issues` name it, with a hint (did you mean ...?).',
  ),
  bad_request: code(400, 'The request could not be read as HTTP (a malformed header or query string).'),
  request_aborted: code(400, 'The client closed the connection before its request body was read.'),
  forbidden: code(403, 'Authenticated, but the role (or the kind of credential) does not allow this; `message` names what is needed.'),
  cross_site_request: code(403, 'A cookie-authenticated write from another site, or a browser call from another site to a local instance.'),
  host_not_allowed: code(403, 'The Host header names neither PUBLIC_BASE_URL nor one of ALLOWED_HOSTS.'),
  method_not_allowed: code(405, 'The path exists, but not with this method.'),
  payload_too_large: code(413, 'The request body is larger than the route accepts (2 MiB unless the route says otherwise).'),
  unsupported_media_type: code(
    415,
    'The body is not `application/json` (or, on the few form routes, `application/x-www-form-urlencoded`).',
  ),
  internal_error: code(500, 'Something failed on our side; the `X-Request-Id` of the answer finds it in the logs.'),
  database_busy: code(503, 'Every database connection is in use; repeat after `Retry-After` seconds.'),
  database_timeout: code(503, 'The database did not answer within its deadline; repeat after `Retry-After` seconds.'),
  database_unavailable: code(503, 'The database cannot be reached; repeat after `Retry-After` seconds.'),
  server_busy: code(503, 'This process has as much work of this kind waiting as it lets wait; repeat after `Retry-After` seconds.'),

  // Accounts, sessions and organizations.
  invalid_credentials: code(401, 'Sign-in: the e-mail address or the password is wrong.', { area: 'POST /api/auth/login' }),
  too_many_attempts: code(429, 'Too many sign-in attempts for this address or from this client; `Retry-After` gives the seconds.', {
    area: 'POST /api/auth/login',
  }),
  too_many_requests: code(429, 'Too many sign-ups, resets or client registrations from one client; `Retry-After` gives the seconds.', {
    area: 'public account routes',
  }),
  email_taken: code(409, 'An account with this e-mail address already exists.', { area: 'sign-up' }),
  email_already_verified: code(409, 'The e-mail address is verified already.', { area: 'POST /api/auth/resend-verification' }),
  invalid_token: code(400, 'A verification or password-reset link is invalid, used or expired.', { area: 'e-mail links' }),
  session_required: code(400, 'Only a cookie session can switch organization; an API token is bound to its org.', {
    area: 'POST /api/auth/switch-org',
  }),
  password_mismatch: code(403, "The password does not match this account's.", { area: 'DELETE /api/auth/me' }),
  email_mismatch: code(403, "`confirm_email` is not this account's e-mail address.", { area: 'DELETE /api/auth/me' }),
  reauthentication_required: code(403, 'An account without a password deletes itself within 15 minutes of signing in again.', {
    area: 'DELETE /api/auth/me',
  }),
  sole_owner: code(409, 'The account is the only owner of an org that has other members.', { area: 'DELETE /api/auth/me' }),
  captcha_required: code(400, 'Sign-up needs `captchaToken` when a captcha is configured.', { area: 'sign-up' }),
  captcha_failed: code(400, "The captcha was not solved; `codes` has the provider's reasons.", { area: 'sign-up' }),
  captcha_unavailable: code(503, 'The captcha provider could not be reached.', { area: 'sign-up' }),
  token_limit: code(409, 'The user holds as many live API tokens in this org as allowed.', { area: 'tokens' }),
  email_verification_required: code(403, 'Creating an organization needs a verified e-mail address.', { area: 'POST /api/orgs' }),
  slug_taken: code(409, 'Another organization has this slug.', { area: 'orgs' }),
  org_limit: code(409, 'The user owns as many organizations as allowed (ORGS_PER_USER_MAX).', { area: 'POST /api/orgs' }),
  user_not_found: code(404, 'No account has the e-mail address given; `message` names it.', { area: 'POST /api/orgs/:id/members' }),
  already_member: code(409, 'The user is a member of the organization already.', { area: 'POST /api/orgs/:id/members' }),
  last_owner: code(409, 'An organization keeps at least one owner.', { area: 'org members' }),

  // Signing in through an identity provider (OpenID Connect).
  oauth_not_configured: code(404, 'No identity provider is configured (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET).', {
    area: '/api/auth/oauth',
  }),
  oauth_unavailable: code(503, 'The identity provider could not be reached.', { area: '/api/auth/oauth' }),
  oauth_failed: code(400, 'The identity provider refused the sign-in.', { area: '/api/auth/oauth' }),
  invalid_state: code(400, 'The sign-in was not started in this browser, or is used or expired; start again.', { area: '/api/auth/oauth' }),
  email_missing: code(400, 'The identity provider did not share an e-mail address.', { area: '/api/auth/oauth' }),
  email_unverified: code(400, 'An account with this e-mail exists and the identity provider has not verified the address.', {
    area: '/api/auth/oauth',
  }),
  no_organization: code(400, 'The account belongs to no organization.', { area: '/api/auth/oauth' }),

  // The OAuth authorization server for MCP clients (RFC 6749, RFC 7591): its codes are OAuth's, with `error_description`.
  invalid_request: code(400, 'OAuth: a parameter is missing or wrong.', { area: '/oauth' }),
  invalid_client: code([400, 401], 'OAuth: `client_id` names no registered client (401 at the token endpoint).', { area: '/oauth' }),
  invalid_client_metadata: code(400, 'OAuth: a client registration asks for what this server does not support.', {
    area: 'POST /oauth/register',
  }),
  invalid_redirect_uri: code(400, 'OAuth: a redirect URI of a registration is not allowed.', { area: 'POST /oauth/register' }),
  invalid_grant: code(400, "OAuth: the code or refresh token is unknown, used, expired or not this client's.", {
    area: 'POST /oauth/token',
  }),
  invalid_target: code(400, "OAuth: `resource` is not this server's MCP endpoint.", { area: 'POST /oauth/token' }),
  unsupported_grant_type: code(400, 'OAuth: `grant_type` is neither authorization_code nor refresh_token.', { area: 'POST /oauth/token' }),
  temporarily_unavailable: code(503, 'OAuth: the server holds as many client registrations as it keeps.', { area: 'POST /oauth/register' }),
  access_denied: code(302, "OAuth: the person denied consent; sent to the client's redirect_uri.", { area: '/oauth/authorize' }),
  org_changed: code(409, 'The session acts in another organization than the consent page named; reload it.', { area: '/oauth/authorize' }),

  // Memories, search and projects.
  metadata_too_large: code(400, 'An update would grow the stored metadata past its limit; the body has `max_chars` and `received_chars`.', {
    area: 'memories',
  }),
  memory_superseded: code(409, 'The memory was merged into another one; edit that one.', { area: 'memories' }),
  embedding_pending: code(409, 'The memory has no vector yet; the worker embeds it within seconds.', {
    area: 'GET /api/memories/:id/similar',
  }),
  idempotency_key_in_use: code(409, 'A request with this Idempotency-Key is still in progress.', { area: 'saves' }),
  idempotency_key_reused: code(409, 'This Idempotency-Key came with a different body in the last 24 hours.', { area: 'saves' }),
  filter_required: code(400, 'A deletion by filter names no filter.', { area: 'POST /api/memories/deletions' }),
  project_limit: code(409, 'The org has as many projects as allowed; delete unused ones first.', { area: 'projects' }),
  project_name_taken: code(409, 'Another project of this org has that name.', { area: 'projects' }),
  export_not_ready: code(409, 'The export has not completed yet.', { area: 'exports' }),
  invalid_export_filters: code(400, 'The stored filters of an export cannot be applied.', { area: 'exports' }),
  embeddings_unavailable: code(503, 'No embedding model is configured, or the provider cannot be reached.', { area: 'search' }),
  embedding_input_refused: code(502, 'The embedding provider refused the input.', { area: 'search' }),
  as_of_too_broad: code(
    400,
    'A search as of a time (`as_of`) would read more than 10,000 memories alive then, or more than 1,000,000 bytes of text of ' +
      'memories superseded since; narrow its filters. The body has `max_memories`.',
    { area: 'search' },
  ),
  not_supported: code(400, 'A mem0 feature this service does not offer (docs/mem0-migration.md).', { area: '/compat/mem0' }),

  // LLM features, runbooks, entities, webhooks, billing.
  plan_required: code(402, 'The feature needs a paid plan (or your own LLM key); the body has `upgrade_url`.', { area: 'LLM features' }),
  llm_not_configured: code(503, 'No LLM provider is configured on this server.', { area: 'LLM features' }),
  llm_unavailable: code(503, 'The LLM provider cannot be reached.', { area: 'LLM features' }),
  llm_rejected: code(502, 'The LLM provider refused the call (a key it does not accept, say).', { area: 'LLM features' }),
  llm_malformed_output: code(502, 'The LLM answered with output that could not be used.', { area: 'LLM features' }),
  proposal_not_approved: code(409, 'Only an approved consolidation proposal can be merged.', { area: 'consolidation' }),
  proposal_already_merged: code(409, 'A merged proposal cannot be reviewed again.', { area: 'consolidation' }),
  merge_in_progress: code(409, 'A merge of the proposal is running.', { area: 'consolidation' }),
  runbook_title_taken: code(409, 'Another runbook of this org has that title.', { area: 'runbooks' }),
  entity_name_taken: code(409, 'Another entity of this org has that name.', { area: 'entities' }),
  invalid_display_name: code(400, 'An entity name needs at least one letter or digit.', { area: 'entities' }),
  webhook_target_not_allowed: code(400, 'The webhook URL points somewhere deliveries may not go (a private address, say).', {
    area: 'webhooks',
  }),
  endpoint_limit: code(409, 'The org has as many webhook endpoints as allowed.', { area: 'webhooks' }),
  billing_not_configured: code(503, 'The payment processor is not configured.', { area: 'billing' }),
  billing_unavailable: code(503, 'The payment processor gave no usable answer.', { area: 'billing' }),
  no_payment_customer: code(404, 'The org has no payment customer yet; use checkout first.', { area: 'POST /api/billing/portal' }),
  already_paid: code(400, 'The org is on a paid plan already.', { area: 'POST /api/billing/checkout' }),
  invalid_signature: code(400, "The payment processor's signature does not match the body.", { area: 'billing webhook' }),

  // Background work and operators.
  temporal_unavailable: code(503, 'The workflow service cannot be reached; repeat after `Retry-After` seconds.'),
  still_running: code(503, 'The work outlasted the request and goes on; asking again waits for the same run.'),
  workflow_failed: code(503, 'The background work failed; try again.'),
  operator_required: code(403, "Only the service's operators may use the Temporal payload codec.", { area: '/api/temporal/codec' }),
  payload_undecryptable: code(400, 'A Temporal payload could not be decrypted.', { area: '/api/temporal/codec' }),
  dashboard_not_built: code(503, 'The dashboard has not been built on this server.', { area: '/dashboard' }),
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const isErrorCode = (value: unknown): value is ErrorCode => typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);

// The four cases of a 401 `unauthorized`, in its `reason`.
export const UNAUTHORIZED_REASON_MEANINGS = {
  no_credential: 'Neither an `Authorization` header nor the session cookie was sent.',
  malformed_header: 'The `Authorization` header is not `Bearer <token>`.',
  unknown_token: 'The token (or session cookie) is not one this service issued, or no longer exists.',
  revoked_or_expired: 'The credential was revoked, signed out or has expired, or its user left its organization; `message` says which.',
} as const;
export type UnauthorizedReason = keyof typeof UNAUTHORIZED_REASON_MEANINGS;
export const UNAUTHORIZED_REASONS = Object.keys(UNAUTHORIZED_REASON_MEANINGS) as [UnauthorizedReason, ...UnauthorizedReason[]];

// What a `not found` names: `${kind} ${id} not found`.
export const NOT_FOUND_KINDS = [
  'memory',
  'project',
  'org',
  'member',
  'token',
  'runbook',
  'entity',
  'chat session',
  'thread',
  'extraction',
  'export',
  'deletion',
  'consolidation proposal',
  'webhook endpoint',
  'webhook delivery',
  'dashboard asset',
  'route',
] as const;
export type NotFoundKind = (typeof NOT_FOUND_KINDS)[number];

// An error body written without AppError (the HTTP layer's own refusals, the worker's metrics port).
export const errorJson = (error: ErrorCode, message: string): { error: ErrorCode; message: string } => ({ error, message });
