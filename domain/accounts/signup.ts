import type { EntityManager } from '@mikro-orm/postgresql';
import { isUniqueViolation } from '../unique-violation.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict } from '../errors.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { VERIFICATION_MAIL_JOB, type VerificationMailArgs } from './verification.ts';
import {
  emailInUse,
  findOrg,
  findUser,
  insertCredential,
  insertMembership,
  insertOrg,
  insertUser,
  orgRowView,
  slugTaken,
  userRowView,
  type OrgRow,
  type UserRow,
} from './rows.ts';
import { slugify, withSuffix } from './slugs.ts';
import type { AccountView } from './views.ts';

export const SESSION_TTL_MS = 60 * 24 * 60 * 60 * 1000;

// Everything signup stores, decided before the transaction: ids and secret hashes are made by the
// caller so that a retried transaction writes the same rows, and no raw secret travels further.
export interface SignupPlan {
  userId: string;
  orgId: string;
  email: string;
  name: string;
  orgName: string;
  passwordHash: string;
  apiToken: { id: string; hash: string; prefix: string };
  session: { id: string; hash: string; prefix: string };
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export async function emailTaken(em: EntityManager, email: string): Promise<boolean> {
  return emailInUse(em, normalizeEmail(email));
}

// One transaction: the user, the org with the user as owner, one default API token, the first cookie session and
// the verification mail's outbox row (sent after the answer). Running it again with the same plan returns the
// same account.
export async function createAccount(em: EntityManager, plan: SignupPlan): Promise<AccountView> {
  return em.transactional(async (tx) => {
    const existing = await findUser(tx, plan.userId);
    if (existing) {
      const org = (await findOrg(tx, plan.orgId))!;
      return { user: userRowView(existing), org: orgRowView(org, 'owner') };
    }
    const email = normalizeEmail(plan.email);
    if (await emailInUse(tx, email)) throw conflict('email_taken', 'an account with this e-mail address already exists');

    const now = new Date();
    let slug = slugify(plan.orgName);
    if (await slugTaken(tx, slug)) slug = withSuffix(slug.slice(0, 71));
    let org: OrgRow;
    let user: UserRow;
    try {
      // The user first: of two racing sign-ups for one address (and so one org name), the loser fails on the e-mail.
      user = await insertUser(tx, {
        id: plan.userId,
        email,
        name: plan.name,
        passwordHash: plan.passwordHash,
        emailVerifiedAt: null,
        lastLoginAt: now,
        lastOrgId: plan.orgId,
        now,
      });
      org = await insertOrg(tx, { id: plan.orgId, slug, name: plan.orgName, now });
    } catch (err) {
      // A racing signup with the same address; a racing slug is left to the caller's retry.
      if (isUniqueViolation(err) && (err as Error).message.includes('users_email_unique')) {
        throw conflict('email_taken', 'an account with this e-mail address already exists');
      }
      throw err;
    }
    await insertMembership(tx, { orgId: org.id, userId: user.id, role: 'owner', now });
    await insertCredential(tx, {
      id: plan.apiToken.id,
      kind: 'api',
      orgId: org.id,
      userId: user.id,
      name: 'default',
      prefix: plan.apiToken.prefix,
      secretHash: plan.apiToken.hash,
      createdAt: now,
      lastUsedAt: null,
      expiresAt: null,
    });
    await insertCredential(tx, {
      id: plan.session.id,
      kind: 'session',
      orgId: org.id,
      userId: user.id,
      name: null,
      prefix: plan.session.prefix,
      secretHash: plan.session.hash,
      createdAt: now,
      lastUsedAt: now,
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
    });
    const actor = { userId: user.id, credentialId: null };
    await recordAudit(tx, { orgId: org.id, action: 'user.signup', targetId: user.id, actor });
    await recordAudit(tx, { orgId: org.id, action: 'org.create', targetId: org.id, actor, details: { slug } });
    await recordAudit(tx, { orgId: org.id, action: 'token.create', targetId: plan.apiToken.id, actor, details: { name: 'default' } });
    const mail: VerificationMailArgs = { userId: user.id, orgId: org.id, mailKey: `signup-${org.id}` };
    await enqueueJobs(tx, [
      {
        orgId: org.id,
        jobType: VERIFICATION_MAIL_JOB,
        jobKey: `verification-mail-${mail.mailKey}`,
        args: [mail],
        description: `send the e-mail verification link to new user ${user.id}`,
      },
    ]);
    return { user: userRowView(user), org: orgRowView(org, 'owner') };
  });
}
