import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import {
  deleteMembership,
  findOrg,
  findUserByEmail,
  insertMembership,
  insertOrg,
  lockMemberships,
  lockUser,
  memberRole,
  membersOf,
  orgRowView,
  orgsOfUser,
  ownedOrgCount,
  renameOrg,
  setMemberRole,
  slugTaken,
} from '../accounts/rows.ts';
import type { Role } from '../accounts/enums.ts';
import { requireRole } from '../accounts/roles.ts';
import { normalizeEmail } from '../accounts/signup.ts';
import { slugify, withSuffix } from '../accounts/slugs.ts';
import type { OrgView } from '../accounts/views.ts';
import { recordAudit } from '../audit/record.ts';
import { AppError, conflict, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { toDate, toDateOrNull } from '../sql.ts';
import { isUniqueViolation } from '../unique-violation.ts';

// Every credential acts in one org: naming any other org, even one the user belongs to, is a 404.
function sameOrg(caller: Caller, orgId: string): void {
  if (caller.orgId !== orgId) throw notFound('org', orgId);
}

// Every org the caller's user belongs to, with the user's role in each, oldest membership first: what a
// person may switch a cookie session to (POST /api/auth/switch-org).
export async function listOwnOrgs(em: EntityManager, caller: Caller): Promise<OrgView[]> {
  return (await orgsOfUser(em, caller.userId)).map((o) => orgRowView(o, o.role));
}

export async function getOrg(em: EntityManager, caller: Caller, orgId: string): Promise<OrgView> {
  sameOrg(caller, orgId);
  const org = await findOrg(em, orgId);
  if (!org) throw notFound('org', orgId);
  return orgRowView(org, caller.role);
}

export async function updateOrg(
  em: EntityManager,
  caller: Caller,
  orgId: string,
  patch: { name?: string | undefined; slug?: string | undefined },
): Promise<OrgView> {
  sameOrg(caller, orgId);
  requireRole(caller, 'owner');
  try {
    return await em.transactional(async (tx) => {
      const org = await renameOrg(tx, orgId, patch, new Date());
      await recordAudit(tx, {
        orgId,
        action: 'org.update',
        targetId: orgId,
        actor: actorOf(caller),
        details: { fields: Object.keys(patch) },
      });
      return orgRowView(org, caller.role);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('slug_taken', 'another organization has this slug');
    throw err;
  }
}

// A new org with the caller as its owner; the caller's current credential stays bound to its own org. Each org has
// free quotas of its own, so only a verified address may create one, and a user owns at most `maxOwned` (the org
// made at sign-up included). The count is taken under a lock on the user's row, so concurrent requests cannot pass it.
export async function createOrg(
  em: EntityManager,
  caller: Caller,
  input: { name: string; slug?: string | undefined },
  maxOwned: number,
): Promise<OrgView> {
  try {
    return await em.transactional(async (tx) => {
      const user = await lockUser(tx, caller.userId);
      if (!user?.email_verified_at && caller.credentialKind !== 'local') {
        throw new AppError(
          'forbidden',
          'email_verification_required',
          'verify your e-mail address before creating an organization (POST /api/auth/resend-verification)',
        );
      }
      if ((await ownedOrgCount(tx, caller.userId)) >= maxOwned)
        throw conflict('org_limit', `a user owns at most ${maxOwned} organizations (ORGS_PER_USER_MAX)`);
      let slug = input.slug ?? slugify(input.name);
      if (input.slug === undefined && (await slugTaken(tx, slug))) slug = withSuffix(slug.slice(0, 71));
      const now = new Date();
      const org = await insertOrg(tx, { id: newId(), slug, name: input.name, now });
      await insertMembership(tx, { orgId: org.id, userId: caller.userId, role: 'owner', now });
      await recordAudit(tx, { orgId: org.id, action: 'org.create', targetId: org.id, actor: actorOf(caller), details: { slug } });
      return orgRowView(org, 'owner');
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('slug_taken', 'another organization has this slug');
    throw err;
  }
}

export interface MemberView {
  id: string;
  email: string;
  name: string;
  role: Role;
  lastLoginAt: number | null;
  createdAt: number;
}

export async function listMembers(em: EntityManager, caller: Caller, orgId: string): Promise<MemberView[]> {
  sameOrg(caller, orgId);
  return (await membersOf(em, orgId)).map((r) => ({
    id: r.id,
    email: r.email,
    name: r.name,
    role: r.role,
    lastLoginAt: toDateOrNull(r.last_login_at)?.getTime() ?? null,
    createdAt: toDate(r.created_at).getTime(),
  }));
}

export async function addMember(
  em: EntityManager,
  caller: Caller,
  orgId: string,
  input: { email: string; role: Role },
): Promise<{ userId: string; role: Role }> {
  sameOrg(caller, orgId);
  requireRole(caller, 'owner');
  return em.transactional(async (tx) => {
    const email = normalizeEmail(input.email);
    const user = await findUserByEmail(tx, email);
    if (!user) throw new AppError('not_found', 'user_not_found', `user ${email} not found: no account has this e-mail address`);
    if (await memberRole(tx, orgId, user.id)) throw conflict('already_member', 'this user is already a member of the organization');
    await insertMembership(tx, { orgId, userId: user.id, role: input.role, now: new Date() });
    await recordAudit(tx, { orgId, action: 'org.member.add', targetId: user.id, actor: actorOf(caller), details: { role: input.role } });
    return { userId: user.id, role: input.role };
  });
}

// Changes a member's role; their credentials act with the new role from their next request on (the role is
// read with every credential lookup).
export async function changeMemberRole(em: EntityManager, caller: Caller, orgId: string, userId: string, role: Role): Promise<MemberView> {
  sameOrg(caller, orgId);
  requireRole(caller, 'owner');
  return em.transactional(async (tx) => {
    const members = await lockMemberships(tx, orgId);
    const target = members.find((m) => m.user_id === userId);
    if (!target) throw notFound('member', userId);
    if (target.role !== role) {
      if (target.role === 'owner') assertNotLastOwner(members);
      await setMemberRole(tx, { orgId, userId, role });
      await recordAudit(tx, {
        orgId,
        action: 'org.member.role',
        targetId: userId,
        actor: actorOf(caller),
        details: { from: target.role, to: role },
      });
    }
    return (await listMembers(tx, caller, orgId)).find((m) => m.id === userId)!;
  });
}

function assertNotLastOwner(members: { role: Role }[]): void {
  if (members.filter((m) => m.role === 'owner').length <= 1) throw conflict('last_owner', 'an organization keeps at least one owner');
}

export async function removeMember(em: EntityManager, caller: Caller, orgId: string, userId: string): Promise<void> {
  sameOrg(caller, orgId);
  requireRole(caller, 'owner');
  await em.transactional(async (tx) => {
    const members = await lockMemberships(tx, orgId);
    const target = members.find((m) => m.user_id === userId);
    if (!target) throw notFound('member', userId);
    if (target.role === 'owner') assertNotLastOwner(members);
    await deleteMembership(tx, orgId, userId);
    await recordAudit(tx, { orgId, action: 'org.member.remove', targetId: userId, actor: actorOf(caller) });
  });
}
