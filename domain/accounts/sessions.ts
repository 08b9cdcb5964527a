import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../audit/record.ts';
import { AppError, forbidden, notFound, unauthenticated } from '../errors.ts';
import { newId } from '../ids.ts';
import { query, queryOne, sql } from '../sql.ts';
import { insertCredential, ORG_COLUMNS, orgRowView, timestamp, USER_COLUMNS, userRowView, type OrgRow, type UserRow } from './rows.ts';
import { Credential, Membership, Org, User, type Role } from './tables.ts';
import type { Caller } from './caller.ts';
import { verifyPassword } from './passwords.ts';
import { issueSecret } from './secrets.ts';
import { normalizeEmail, SESSION_TTL_MS } from './signup.ts';
import { orgView, userView, type AccountView } from './views.ts';

export interface LoginInput {
  email: string;
  password: string;
  orgId?: string | undefined;
}

export interface SessionIssued extends AccountView {
  sessionSecret: string;
  expiresAt: Date;
}

const badCredentials = (): AppError => new AppError('unauthenticated', 'invalid_credentials', 'e-mail or password is wrong');

export async function login(em: EntityManager, input: LoginInput): Promise<SessionIssued> {
  const user = await em.findOne(User, { email: normalizeEmail(input.email) });
  const ok = await verifyPassword(user?.passwordHash ?? null, input.password);
  if (!user || !ok) throw badCredentials();

  const memberships = await em.find(Membership, { userId: user.id }, { orderBy: { createdAt: 'asc' } });
  let membership: Membership | undefined;
  if (input.orgId !== undefined) {
    membership = memberships.find((m) => m.orgId === input.orgId);
    if (!membership) throw forbidden('you are not a member of that organization');
  } else {
    membership = memberships.find((m) => m.orgId === user.lastOrgId) ?? memberships[0];
  }
  if (!membership) throw forbidden('this account belongs to no organization');
  return openSession(em, user, membership);
}

// Binds a new cookie session to one org the user belongs to.
export async function openSession(
  em: EntityManager,
  user: { id: string },
  membership: { orgId: string; role: Role },
): Promise<SessionIssued> {
  const secret = issueSecret();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  return em.transactional(async (tx) => {
    const org = (await queryOne(tx, sql<OrgRow>`select ${ORG_COLUMNS} from orgs where id = ${membership.orgId}`))!;
    const sessionId = newId();
    await insertCredential(tx, {
      id: sessionId,
      kind: 'session',
      orgId: org.id,
      userId: user.id,
      name: null,
      prefix: secret.prefix,
      secretHash: secret.hash,
      createdAt: now,
      lastUsedAt: now,
      expiresAt,
    });
    const fresh = (await queryOne(
      tx,
      sql<UserRow>`update users set last_login_at = ${timestamp(now)}, last_org_id = ${org.id}
        where id = ${user.id} returning ${USER_COLUMNS}`,
    ))!;
    await recordAudit(tx, { orgId: org.id, action: 'auth.login', targetId: user.id, actor: { userId: user.id, credentialId: sessionId } });
    return { user: userRowView(fresh), org: orgRowView(org, membership.role), sessionSecret: secret.raw, expiresAt };
  });
}

export async function logout(em: EntityManager, caller: Caller): Promise<void> {
  if (caller.credentialKind !== 'session' || caller.credentialId === null) return;
  await em.transactional(async (tx) => {
    const now = timestamp(new Date());
    await query(tx, sql`update credentials set revoked_at = ${now} where id = ${caller.credentialId} and revoked_at is null`);
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'auth.logout',
      targetId: caller.userId,
      actor: { userId: caller.userId, credentialId: caller.credentialId },
    });
  });
}

// Sliding expiry: every GET /api/auth/me moves the session's end 60 days ahead.
export async function refreshSession(em: EntityManager, caller: Caller): Promise<Date | null> {
  if (caller.credentialKind !== 'session' || caller.credentialId === null) return null;
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await em.nativeUpdate(Credential, { id: caller.credentialId }, { expiresAt });
  return expiresAt;
}

export async function switchOrg(em: EntityManager, caller: Caller, orgId: string): Promise<AccountView> {
  if (caller.credentialKind !== 'session' || caller.credentialId === null) {
    throw new AppError('invalid', 'session_required', 'only a cookie session can switch organization; API tokens are bound to one org');
  }
  const membership = await queryOne(
    em,
    sql<{ role: Role }>`select role from memberships where org_id = ${orgId} and user_id = ${caller.userId}`,
  );
  if (!membership) throw notFound('org', orgId);
  return em.transactional(async (tx) => {
    await query(tx, sql`update credentials set org_id = ${orgId} where id = ${caller.credentialId}`);
    const user = (await queryOne(
      tx,
      sql<UserRow>`update users set last_org_id = ${orgId} where id = ${caller.userId} returning ${USER_COLUMNS}`,
    ))!;
    const org = (await queryOne(tx, sql<OrgRow>`select ${ORG_COLUMNS} from orgs where id = ${orgId}`))!;
    await recordAudit(tx, {
      orgId,
      action: 'auth.switch_org',
      targetId: orgId,
      actor: { userId: caller.userId, credentialId: caller.credentialId },
    });
    return { user: userRowView(user), org: orgRowView(org, membership.role) };
  });
}

export async function currentAccount(em: EntityManager, caller: Caller): Promise<AccountView> {
  const account = await loadAccount(em, caller.userId, caller.orgId);
  if (!account) throw unauthenticated('revoked_or_expired', "this credential's user is no longer a member of its organization");
  return account;
}

export async function renameUser(em: EntityManager, caller: Caller, name: string): Promise<AccountView> {
  return em.transactional(async (tx) => {
    const user = (await queryOne(
      tx,
      sql<UserRow>`update users set name = ${name}, updated_at = ${timestamp(new Date())}
        where id = ${caller.userId} returning ${USER_COLUMNS}`,
    ))!;
    const org = (await queryOne(tx, sql<OrgRow>`select ${ORG_COLUMNS} from orgs where id = ${caller.orgId}`))!;
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'user.update',
      targetId: caller.userId,
      actor: { userId: caller.userId, credentialId: caller.credentialId },
      details: { fields: ['name'] },
    });
    return { user: userRowView(user), org: orgRowView(org, caller.role) };
  });
}

export async function loadAccount(em: EntityManager, userId: string, orgId: string): Promise<AccountView | null> {
  const membership = await em.findOne(Membership, { orgId, userId });
  const user = await em.findOne(User, { id: userId });
  const org = await em.findOne(Org, { id: orgId });
  if (!membership || !user || !org) return null;
  return { user: userView(user), org: orgView(org, membership.role) };
}
