import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { query, queryOne, sql, toDate, toDateOrNull } from '../sql.ts';
import type { CredentialKind, Plan, Role } from './enums.ts';
import type { OrgView, UserView } from './views.ts';

// The account tables (users, orgs, memberships, credentials) in raw SQL (docs/architecture.md, "Data access"), and
// the one view of a user and of an org. Timestamps travel as ISO text, as pg returns them through this connection.

const at = (date: Date) => sql`${date.toISOString()}::timestamptz`;

export interface OrgRow {
  id: string;
  slug: string;
  name: string;
  plan: Plan;
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

export async function findUser(em: EntityManager, id: string): Promise<UserRow | undefined> {
  return queryOne(em, sql<UserRow>`select ${USER_COLUMNS} from users where id = ${id}`);
}

// `email` as stored: trimmed and lower-cased (normalizeEmail).
export async function findUserByEmail(em: EntityManager, email: string): Promise<UserRow | undefined> {
  return queryOne(em, sql<UserRow>`select ${USER_COLUMNS} from users where email = ${email}`);
}

// Sets the columns given and no other; a verification time already set stays (the first one counts).
export interface UserChanges {
  name?: string;
  passwordHash?: string | null;
  emailVerifiedAt?: Date;
  lastLoginAt?: Date;
  lastOrgId?: string;
  updatedAt?: Date;
}

export async function updateUser(em: EntityManager, id: string, changes: UserChanges): Promise<UserRow> {
  const sets: RawBuilder<unknown>[] = [];
  if (changes.name !== undefined) sets.push(sql`name = ${changes.name}`);
  if (changes.passwordHash !== undefined) sets.push(sql`password_hash = ${changes.passwordHash}`);
  if (changes.emailVerifiedAt) sets.push(sql`email_verified_at = coalesce(email_verified_at, ${at(changes.emailVerifiedAt)})`);
  if (changes.lastLoginAt) sets.push(sql`last_login_at = ${at(changes.lastLoginAt)}`);
  if (changes.lastOrgId !== undefined) sets.push(sql`last_org_id = ${changes.lastOrgId}`);
  if (changes.updatedAt) sets.push(sql`updated_at = ${at(changes.updatedAt)}`);
  return (await queryOne(em, sql<UserRow>`update users set ${sql.join(sets)} where id = ${id} returning ${USER_COLUMNS}`))!;
}

export async function findOrg(em: EntityManager, id: string): Promise<OrgRow | undefined> {
  return queryOne(em, sql<OrgRow>`select ${ORG_COLUMNS} from orgs where id = ${id}`);
}

// The user's row, locked until the transaction ends.
export async function lockUser(em: EntityManager, id: string): Promise<UserRow | undefined> {
  return queryOne(em, sql<UserRow>`select ${USER_COLUMNS} from users where id = ${id} for update`);
}

export async function renameOrg(em: EntityManager, id: string, changes: { name?: string; slug?: string }, now: Date): Promise<OrgRow> {
  const sets = [sql`updated_at = ${at(now)}`];
  if (changes.name !== undefined) sets.push(sql`name = ${changes.name}`);
  if (changes.slug !== undefined) sets.push(sql`slug = ${changes.slug}`);
  return (await queryOne(em, sql<OrgRow>`update orgs set ${sql.join(sets)} where id = ${id} returning ${ORG_COLUMNS}`))!;
}

// The payment processor's side of an org (billing/events.ts); a change sets what it gives, null included.
export interface OrgBilling {
  plan: Plan;
  stripeCustomerId: string | null;
  stripeSubscriptionId: string | null;
  billingStatus: string | null;
}

export async function orgBilling(em: EntityManager, id: string): Promise<OrgBilling | undefined> {
  return queryOne(
    em,
    sql<OrgBilling>`select plan, stripe_customer_id as "stripeCustomerId", stripe_subscription_id as "stripeSubscriptionId",
      billing_status as "billingStatus" from orgs where id = ${id}`,
  );
}

export async function orgIdOfCustomer(em: EntityManager, stripeCustomerId: string): Promise<string | undefined> {
  return (await queryOne(em, sql<{ id: string }>`select id from orgs where stripe_customer_id = ${stripeCustomerId}`))?.id;
}

export async function updateOrgBilling(em: EntityManager, id: string, changes: Partial<OrgBilling>): Promise<void> {
  const sets = [sql`updated_at = now()`];
  if (changes.plan !== undefined) sets.push(sql`plan = ${changes.plan}`);
  if (changes.stripeCustomerId !== undefined) sets.push(sql`stripe_customer_id = ${changes.stripeCustomerId}`);
  if (changes.stripeSubscriptionId !== undefined) sets.push(sql`stripe_subscription_id = ${changes.stripeSubscriptionId}`);
  if (changes.billingStatus !== undefined) sets.push(sql`billing_status = ${changes.billingStatus}`);
  await query(em, sql`update orgs set ${sql.join(sets)} where id = ${id}`);
}

// Its memberships and credentials go with it (on delete cascade).
export async function deleteUser(em: EntityManager, id: string): Promise<void> {
  await query(em, sql`delete from users where id = ${id}`);
}

// The org row itself, once its data is erased; a user who last used it keeps no pointer to it.
export async function deleteOrg(em: EntityManager, id: string): Promise<void> {
  await query(em, sql`update users set last_org_id = null where last_org_id = ${id}`);
  await query(em, sql`delete from orgs where id = ${id}`);
}

export async function memberRole(em: EntityManager, orgId: string, userId: string): Promise<Role | undefined> {
  return (await queryOne(em, sql<{ role: Role }>`select role from memberships where org_id = ${orgId} and user_id = ${userId}`))?.role;
}

// Every org the user belongs to, with the user's role in it, oldest membership first.
export async function orgsOfUser(em: EntityManager, userId: string): Promise<(OrgRow & { role: Role })[]> {
  return query(
    em,
    sql<OrgRow & { role: Role }>`select o.id, o.slug, o.name, o.plan, o.created_at, m.role from memberships m join orgs o on o.id = m.org_id
      where m.user_id = ${userId} order by m.created_at, o.id`,
  );
}

export async function ownedOrgCount(em: EntityManager, userId: string): Promise<number> {
  return (await queryOne(em, sql<{ n: number }>`select count(*)::int as n from memberships where user_id = ${userId} and role = 'owner'`))!
    .n;
}

export interface MemberRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  last_login_at: string | null;
  created_at: string;
}

// The org's members with their user's name and address, oldest membership first.
export async function membersOf(em: EntityManager, orgId: string): Promise<MemberRow[]> {
  return query(
    em,
    sql<MemberRow>`select u.id, u.email, u.name, m.role, u.last_login_at, m.created_at from memberships m join users u on u.id = m.user_id
      where m.org_id = ${orgId} order by m.created_at, u.id`,
  );
}

// Locks the org's memberships in user order (as account deletion does), so that two concurrent removals or demotions
// cannot each leave the other as the last owner.
export async function lockMemberships(em: EntityManager, orgId: string): Promise<{ user_id: string; role: Role }[]> {
  return query(
    em,
    sql<{ user_id: string; role: Role }>`select user_id, role from memberships where org_id = ${orgId} order by user_id for update`,
  );
}

// Every membership of every org the user is in, locked in (org, user) order, as lockMemberships locks one org's.
export async function lockMembershipsAround(em: EntityManager, userId: string): Promise<{ org_id: string; user_id: string; role: Role }[]> {
  return query(
    em,
    sql<{ org_id: string; user_id: string; role: Role }>`select org_id, user_id, role from memberships
      where org_id in (select org_id from memberships where user_id = ${userId})
      order by org_id, user_id for update`,
  );
}

export async function setMemberRole(em: EntityManager, m: { orgId: string; userId: string; role: Role }): Promise<void> {
  await query(em, sql`update memberships set role = ${m.role} where org_id = ${m.orgId} and user_id = ${m.userId}`);
}

export async function deleteMembership(em: EntityManager, orgId: string, userId: string): Promise<void> {
  await query(em, sql`delete from memberships where org_id = ${orgId} and user_id = ${userId}`);
}

export async function insertOrg(
  em: EntityManager,
  org: { id: string; slug: string; name: string; plan?: Plan; now: Date },
): Promise<OrgRow> {
  return (await queryOne(
    em,
    sql<OrgRow>`insert into orgs (id, slug, name, plan, created_at, updated_at)
      values (${org.id}, ${org.slug}, ${org.name}, ${org.plan ?? 'free'}, ${at(org.now)}, ${at(org.now)}) returning ${ORG_COLUMNS}`,
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

export interface TokenRow {
  id: string;
  prefix: string;
  name: string | null;
  user_id: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
}

const TOKEN_COLUMNS = sql`id, prefix, name, user_id, created_at, last_used_at, expires_at`;

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

export async function insertCredential(em: EntityManager, c: CredentialInsert): Promise<TokenRow> {
  const maybe = (date: Date | null) => (date === null ? sql`null` : at(date));
  return (await queryOne(
    em,
    sql<TokenRow>`insert into credentials
        (id, kind, org_id, user_id, name, prefix, secret_hash, created_at, last_used_at, expires_at, revoked_at)
      values (${c.id}, ${c.kind}, ${c.orgId}, ${c.userId}, ${c.name}, ${c.prefix}, ${c.secretHash}, ${at(c.createdAt)},
        ${maybe(c.lastUsedAt)}, ${maybe(c.expiresAt)}, null) returning ${TOKEN_COLUMNS}`,
  ))!;
}

// The org's live API tokens (only `userId`'s when given), newest first.
export async function liveApiTokens(em: EntityManager, orgId: string, userId: string | null): Promise<TokenRow[]> {
  return query(
    em,
    sql<TokenRow>`select ${TOKEN_COLUMNS} from credentials
      where org_id = ${orgId} and kind = 'api' and revoked_at is null ${userId === null ? sql`` : sql`and user_id = ${userId}`}
      order by created_at desc, id desc`,
  );
}

export async function findCredential(em: EntityManager, id: string): Promise<TokenRow | undefined> {
  return queryOne(em, sql<TokenRow>`select ${TOKEN_COLUMNS} from credentials where id = ${id}`);
}

// What deleting the user ends: its API tokens (revoked or not) and its live sessions.
export async function credentialCountsOf(em: EntityManager, userId: string): Promise<{ api: number; sessions: number }> {
  return (await queryOne(
    em,
    sql<{ api: number; sessions: number }>`select count(*) filter (where kind = 'api')::int as api,
        count(*) filter (where kind = 'session' and revoked_at is null)::int as sessions
      from credentials where user_id = ${userId}`,
  ))!;
}

// The user's live API tokens, in one org when given: the cap on them (MAX_LIVE_TOKENS), and what a reset keeps.
export async function liveApiTokenCount(em: EntityManager, userId: string, orgId: string | null): Promise<number> {
  return (await queryOne(
    em,
    sql<{ n: number }>`select count(*)::int as n from credentials
      where user_id = ${userId} and kind = 'api' and revoked_at is null ${orgId === null ? sql`` : sql`and org_id = ${orgId}`}`,
  ))!.n;
}

export async function revokeCredential(em: EntityManager, credentialId: string): Promise<void> {
  await query(em, sql`update credentials set revoked_at = now() where id = ${credentialId} and revoked_at is null`);
}

// Revokes the user's live credentials (of one kind when given) and says how many.
export async function revokeCredentialsOf(em: EntityManager, userId: string, kind: CredentialKind | null): Promise<number> {
  return (await queryOne(
    em,
    sql<{ n: number }>`with revoked as (update credentials set revoked_at = now()
      where user_id = ${userId} and revoked_at is null ${kind === null ? sql`` : sql`and kind = ${kind}`} returning 1)
      select count(*)::int as n from revoked`,
  ))!.n;
}

export async function setCredentialOrg(em: EntityManager, credentialId: string, orgId: string): Promise<void> {
  await query(em, sql`update credentials set org_id = ${orgId} where id = ${credentialId}`);
}

export async function setCredentialExpiry(em: EntityManager, credentialId: string, expiresAt: Date): Promise<void> {
  await query(em, sql`update credentials set expires_at = ${at(expiresAt)} where id = ${credentialId}`);
}

export { at as timestamp };
