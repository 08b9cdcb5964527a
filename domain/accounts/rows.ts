import type { EntityManager } from '@mikro-orm/postgresql';
import { query, queryOne, sql, toDate, toDateOrNull } from '../sql.ts';
import type { CredentialKind, Org, Role } from './tables.ts';
import type { OrgView, UserView } from './views.ts';

// The account tables (users, orgs, memberships, credentials) in raw SQL, for the transactions that also write
// audit or outbox rows (docs/architecture.md, "Data access"). Timestamps travel as ISO text, as pg returns them.

const at = (date: Date) => sql`${date.toISOString()}::timestamptz`;

export interface OrgRow {
  id: string;
  slug: string;
  name: string;
  plan: Org['plan'];
  created_at: string;
}

export const ORG_COLUMNS = sql`id, slug, name, plan, created_at`;

export const orgRowView = (o: OrgRow, role: Role): OrgView => ({
  id: o.id,
  slug: o.slug,
  name: o.name,
  plan: o.plan,
  role,
  createdAt: toDate(o.created_at).getTime(),
});

export interface UserRow {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  email_verified_at: string | null;
  last_login_at: string | null;
  last_org_id: string | null;
  created_at: string;
  updated_at: string;
}

export const USER_COLUMNS = sql`id, email, name, password_hash, email_verified_at, last_login_at, last_org_id, created_at, updated_at`;

export const userRowView = (u: UserRow): UserView => ({
  id: u.id,
  email: u.email,
  name: u.name,
  emailVerified: u.email_verified_at !== null,
  emailVerifiedAt: toDateOrNull(u.email_verified_at)?.getTime() ?? null,
  lastLoginAt: toDateOrNull(u.last_login_at)?.getTime() ?? null,
  createdAt: toDate(u.created_at).getTime(),
  updatedAt: toDate(u.updated_at).getTime(),
});

export async function slugTaken(em: EntityManager, slug: string): Promise<boolean> {
  return (await queryOne(em, sql`select 1 from orgs where slug = ${slug}`)) !== undefined;
}

export async function emailInUse(em: EntityManager, email: string): Promise<boolean> {
  return (await queryOne(em, sql`select 1 from users where email = ${email}`)) !== undefined;
}

export async function insertOrg(em: EntityManager, org: { id: string; slug: string; name: string; now: Date }): Promise<OrgRow> {
  return (await queryOne(
    em,
    sql<OrgRow>`insert into orgs (id, slug, name, plan, created_at, updated_at)
      values (${org.id}, ${org.slug}, ${org.name}, 'free', ${at(org.now)}, ${at(org.now)}) returning ${ORG_COLUMNS}`,
  ))!;
}

export async function insertUser(
  em: EntityManager,
  user: {
    id: string;
    email: string;
    name: string;
    passwordHash: string | null;
    emailVerifiedAt: Date | null;
    lastLoginAt: Date | null;
    lastOrgId: string;
    now: Date;
  },
): Promise<UserRow> {
  const maybe = (date: Date | null) => (date === null ? sql`null` : at(date));
  return (await queryOne(
    em,
    sql<UserRow>`insert into users (id, email, name, password_hash, email_verified_at, last_login_at, last_org_id, created_at, updated_at)
      values (${user.id}, ${user.email}, ${user.name}, ${user.passwordHash}, ${maybe(user.emailVerifiedAt)}, ${maybe(user.lastLoginAt)},
        ${user.lastOrgId}, ${at(user.now)}, ${at(user.now)}) returning ${USER_COLUMNS}`,
  ))!;
}

export async function insertMembership(em: EntityManager, m: { orgId: string; userId: string; role: Role; now: Date }): Promise<void> {
  await query(
    em,
    sql`insert into memberships (org_id, user_id, role, created_at) values (${m.orgId}, ${m.userId}, ${m.role}, ${at(m.now)})`,
  );
}

export interface CredentialInsert {
  id: string;
  kind: CredentialKind;
  orgId: string;
  userId: string;
  name: string | null;
  prefix: string;
  secretHash: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
}

export async function insertCredential(em: EntityManager, c: CredentialInsert): Promise<void> {
  const maybe = (date: Date | null) => (date === null ? sql`null` : at(date));
  await query(
    em,
    sql`insert into credentials
        (id, kind, org_id, user_id, name, prefix, secret_hash, created_at, last_used_at, expires_at, revoked_at)
      values (${c.id}, ${c.kind}, ${c.orgId}, ${c.userId}, ${c.name}, ${c.prefix}, ${c.secretHash}, ${at(c.createdAt)},
        ${maybe(c.lastUsedAt)}, ${maybe(c.expiresAt)}, null)`,
  );
}

export { at as timestamp };
