// The values the account tables' enum columns take (their check constraints in migrations/ say the same).
export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const PLANS = ['free', 'personal', 'team', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

// API tokens and cookie sessions are one record type: both forms resolve to the same kind of row
// (contract section 5.1); `kind` separates what the token list shows from what logout ends.
export const CREDENTIAL_KINDS = ['api', 'session'] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];
