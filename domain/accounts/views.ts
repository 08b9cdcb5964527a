import type { Org, Role, User } from './tables.ts';

// Plain shapes handed from the domain to its callers; timestamps are epoch milliseconds, as in the API.
export interface OrgView {
  id: string;
  slug: string;
  name: string;
  plan: Org['plan'];
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

export const userView = (u: User): UserView => ({
  id: u.id,
  email: u.email,
  name: u.name,
  emailVerified: Boolean(u.emailVerifiedAt),
  emailVerifiedAt: u.emailVerifiedAt?.getTime() ?? null,
  lastLoginAt: u.lastLoginAt?.getTime() ?? null,
  createdAt: u.createdAt.getTime(),
  updatedAt: u.updatedAt.getTime(),
});

export const orgView = (o: Org, role: Role): OrgView => ({
  id: o.id,
  slug: o.slug,
  name: o.name,
  plan: o.plan,
  role,
  createdAt: o.createdAt.getTime(),
});
