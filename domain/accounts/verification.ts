import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from './caller.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, invalid } from '../errors.ts';
import { newId } from '../ids.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { EmailVerification, User } from './tables.ts';
import { hashSecret, issueSecret } from './secrets.ts';

export const VERIFICATION_TTL_MS = 48 * 60 * 60 * 1000;
export const VERIFICATION_MAIL_JOB = 'verificationMail';

export interface VerificationMailArgs {
  userId: string;
  orgId: string;
  // Names the mail so that a retried send is recognised as the same mail.
  mailKey: string;
}

// A fresh single-use token for the user's current address; only its hash is stored.
export async function issueVerificationToken(em: EntityManager, userId: string): Promise<{ raw: string; email: string } | null> {
  const user = await em.findOne(User, { id: userId });
  if (!user || user.emailVerifiedAt) return null;
  const secret = issueSecret();
  const now = new Date();
  em.create(EmailVerification, {
    id: newId(),
    userId,
    email: user.email,
    tokenHash: secret.hash,
    createdAt: now,
    expiresAt: new Date(now.getTime() + VERIFICATION_TTL_MS),
    usedAt: null,
  });
  await em.flush();
  return { raw: secret.raw, email: user.email };
}

// The mail leaves through the outbox, so the request answers at once and no committed request loses its mail.
export async function requestVerificationMail(em: EntityManager, caller: Caller): Promise<void> {
  await em.transactional(async (tx) => {
    const user = await tx.findOneOrFail(User, { id: caller.userId });
    if (user.emailVerifiedAt) throw conflict('email_already_verified', 'this e-mail address is already verified');
    const mailKey = newId();
    await recordAudit(tx, { orgId: caller.orgId, action: 'auth.verification.resend', targetId: user.id, actor: actorOf(caller) });
    const args: VerificationMailArgs = { userId: user.id, orgId: caller.orgId, mailKey };
    await enqueueJobs(tx, [
      {
        orgId: caller.orgId,
        jobType: VERIFICATION_MAIL_JOB,
        jobKey: `verification-mail-${mailKey}`,
        args: [args],
        description: `send an e-mail verification link to user ${user.id}`,
      },
    ]);
  });
}

// Consumes a verification token: single use, unexpired, and only for the address it was sent to.
export async function verifyEmail(em: EntityManager, rawToken: string): Promise<void> {
  await em.transactional(async (tx) => {
    const row = await tx.findOne(EmailVerification, { tokenHash: hashSecret(rawToken) }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const user = row ? await tx.findOne(User, { id: row.userId }) : null;
    if (!row || !user || row.usedAt || row.expiresAt.getTime() < Date.now() || user.email !== row.email) {
      throw invalid('invalid_token', 'this verification link is invalid, used or expired');
    }
    row.usedAt = new Date();
    user.emailVerifiedAt ??= new Date();
    user.updatedAt = new Date();
    if (user.lastOrgId)
      await recordAudit(tx, {
        orgId: user.lastOrgId,
        action: 'auth.email_verified',
        targetId: user.id,
        actor: { userId: user.id, credentialId: null },
      });
  });
}
