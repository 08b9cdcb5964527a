import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../audit/record.ts';
import { AppError, forbidden, notFound, unauthenticated } from '../errors.ts';
import { newId } from '../ids.ts';
import {
  findOrg,
  findUser,
  findUserByEmail,
  insertCredential,
  memberRole,
  orgRowView,
  orgsOfUser,
  revokeCredential,
  setCredentialOrg,
  setCredentialExpiry,
  updateUser,
  userRowView,
} from './rows.ts';
import type { Role } from './enums.ts';
import type { Caller } from './caller.ts';
import { verifyPassword } from './passwords.ts';
import { issueSecret } from './secrets.ts';
import { normalizeEmail, SESSION_TTL_MS } from './signup.ts';
import type { AccountView } from './views.ts';

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
  const user = await findUserByEmail(em, normalizeEmail(input.email));
  const ok = await verifyPassword(user?.password_hash ?? null, input.password);
  if (!user || !ok) throw badCredentials();

  const orgs = await orgsOfUser(em, user.id);
  let org: { id: string; role: Role } | undefined;
  if (input.orgId !== undefined) {
    org = orgs.find((o) => o.id === input.orgId);
    if (!org) throw forbidden('you are not a member of that organization');
  } else {
    org = orgs.find((o) => o.id === user.last_org_id) ?? orgs[0];
  }
  if (!org) throw forbidden('this account belongs to no organization');
  return openSession(em, user, { orgId: org.id, role: org.role });
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
    const org = (await findOrg(tx, membership.orgId))!;
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
    const fresh = await updateUser(tx, user.id, { lastLoginAt: now, lastOrgId: org.id });
    await recordAudit(tx, { orgId: org.id, action: 'auth.login', targetId: user.id, actor: { userId: user.id, credentialId: sessionId } });
    return { user: userRowView(fresh), org: orgRowView(org, membership.role), sessionSecret: secret.raw, expiresAt };
  });
}

export async function logout(em: EntityManager, caller: Caller): Promise<void> {
  const { credentialId } = caller;
  if (caller.credentialKind !== 'session' || credentialId === null) return;
  await em.transactional(async (tx) => {
    await revokeCredential(tx, credentialId);
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'auth.logout',
      targetId: caller.userId,
      actor: { userId: caller.userId, credentialId },
    });
  });
}

// Sliding expiry: every GET /api/auth/me moves the session's end 60 days ahead.
export async function refreshSession(em: EntityManager, caller: Caller): Promise<Date | null> {
  if (caller.credentialKind !== 'session' || caller.credentialId === null) return null;
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await setCredentialExpiry(em, caller.credentialId, expiresAt);
  return expiresAt;
}

export async function switchOrg(em: EntityManager, caller: Caller, orgId: string): Promise<AccountView> {
  const { credentialId } = caller;
  if (caller.credentialKind !== 'session' || credentialId === null) {
    throw new AppError('invalid', 'session_required', 'only a cookie session can switch organization; API tokens are bound to one org');
  }
  const role = await memberRole(em, orgId, caller.userId);
  if (!role) throw notFound('org', orgId);
  return em.transactional(async (tx) => {
    await setCredentialOrg(tx, credentialId, orgId);
    const user = await updateUser(tx, caller.userId, { lastOrgId: orgId });
    const org = (await findOrg(tx, orgId))!;
    await recordAudit(tx, {
      orgId,
      action: 'auth.switch_org',
      targetId: orgId,
      actor: { userId: caller.userId, credentialId },
    });
    return { user: userRowView(user), org: orgRowView(org, role) };
  });
}

export async function currentAccount(em: EntityManager, caller: Caller): Promise<AccountView> {
  const account = await loadAccount(em, caller.userId, caller.orgId);
  if (!account) throw unauthenticated('revoked_or_expired', "this credential's user is no longer a member of its organization");
  return account;
}

export async function renameUser(em: EntityManager, caller: Caller, name: string): Promise<AccountView> {
  return em.transactional(async (tx) => {
    const user = await updateUser(tx, caller.userId, { name, updatedAt: new Date() });
    const org = (await findOrg(tx, caller.orgId))!;
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
  const role = await memberRole(em, orgId, userId);
  const user = await findUser(em, userId);
  const org = await findOrg(em, orgId);
  if (!role || !user || !org) return null;
  return { user: userRowView(user), org: orgRowView(org, role) };
}
