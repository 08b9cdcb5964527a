import type { CredentialKind, Plan, Role } from './enums.ts';
import type { Actor } from '../audit/record.ts';

// Who is calling, resolved once per request from a cookie session, a bearer token or local mode.
export interface Caller {
  userId: string;
  orgId: string;
  role: Role;
  plan: Plan;
  credentialId: string | null;
  credentialKind: CredentialKind | 'local';
}

export const actorOf = (caller: Caller): Actor => ({ userId: caller.userId, credentialId: caller.credentialId });
