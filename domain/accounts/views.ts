import type { Plan, Role } from './enums.ts';

// Plain shapes handed from the domain to its callers; timestamps stay Dates until the HTTP edge.
export interface OrgView {
  id: string;
  slug: string;
  name: string;
  plan: Plan;
  role: Role;
  createdAt: Date;
}

export interface UserView {
  id: string;
  email: string;
  name: string;
  emailVerifiedAt: Date | null;
  lastLoginAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AccountView {
  user: UserView;
  org: OrgView;
}
