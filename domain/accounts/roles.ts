import { forbidden } from '../errors.ts';
import type { Role } from './enums.ts';
import type { Caller } from './caller.ts';

// Role checks live here and nowhere else; docs/roles.md lists which route needs which role.
const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 };

export function requireRole(caller: Caller, needed: Role): void {
  if (RANK[caller.role] < RANK[needed]) throw forbidden(`this action needs the ${needed} role in the organization`);
}

export const hasRole = (caller: Caller, needed: Role): boolean => RANK[caller.role] >= RANK[needed];
