import type { EntityManager } from '@mikro-orm/postgresql';
import { findUser } from './rows.ts';
import type { Caller } from './caller.ts';

// Operators run the service itself (OPERATOR_EMAILS): they may read what Temporal's history holds for every
// org. A verified e-mail is required, so nobody becomes one by signing up with an operator's address.
// In local mode the one implicit user runs everything.
export async function isOperator(em: EntityManager, caller: Caller, operatorEmails: readonly string[]): Promise<boolean> {
  if (caller.credentialKind === 'local') return true;
  if (operatorEmails.length === 0) return false;
  const user = await findUser(em, caller.userId);
  return user !== undefined && user.email_verified_at !== null && operatorEmails.includes(user.email.toLowerCase());
}
