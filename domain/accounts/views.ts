import type { Org, Role, User } from './tables.ts';

// Plain shapes handed from the domain to its callers; timestamps stay Dates until the HTTP edge.
export interface OrgView {
  id: string;
  slug: string;
  name: string;
  plan: Org['plan'];
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

export const userView = (u: User): UserView => ({
  id: u.id,
  email: u.email,
  name: u.name,
  emailVerifiedAt: u.emailVerifiedAt ?? null,
  lastLoginAt: u.lastLoginAt ?? null,
  createdAt: u.createdAt,
  updatedAt: u.updatedAt,
});

export const orgView = (o: Org, role: Role): OrgView => ({
  id: o.id,
  slug: o.slug,
  name: o.name,
  plan: o.plan,
  role,
  createdAt: o.createdAt,
});
