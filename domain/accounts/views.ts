import type { Plan, Role } from './enums.ts';

// Plain shapes handed from the domain to its callers; timestamps are epoch milliseconds, as in the API.
export interface OrgView {
  id: string;
  slug: string;
  name: string;
  plan: Plan;
  role: Role;
  createdAt: number;
}

export interface UserView {
  id: string;
  email: string;
  name: string;
  emailVerified: boolean;
  emailVerifiedAt: number | null;
  lastLoginAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface AccountView {
  user: UserView;
  org: OrgView;
}
