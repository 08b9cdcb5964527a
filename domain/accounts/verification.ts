import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from './caller.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, invalid } from '../errors.ts';
import { newId } from '../ids.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { query, queryOne, sql, toDate } from '../sql.ts';
import { findUser, timestamp, updateUser } from './rows.ts';
import { hashSecret, issueSecret } from './secrets.ts';

const VERIFICATION_TTL_MS = 48 * 60 * 60 * 1000;
export const VERIFICATION_MAIL_JOB = 'verificationMail';

export interface VerificationMailArgs {
  userId: string;
  orgId: string;
  // Names the mail so that a retried send is recognised as the same mail.
  mailKey: string;
}

// A fresh single-use token for the user's current address; only its hash is stored.
export async function issueVerificationToken(em: EntityManager, userId: string): Promise<{ raw: string; email: string } | null> {
  const user = await findUser(em, userId);
  if (!user || user.email_verified_at) return null;
  const secret = issueSecret();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + VERIFICATION_TTL_MS);
  await query(
    em,
    sql`insert into email_verifications (id, user_id, email, token_hash, created_at, expires_at, used_at)
      values (${newId()}, ${userId}, ${user.email}, ${secret.hash}, ${timestamp(now)}, ${timestamp(expiresAt)}, null)`,
  );
  return { raw: secret.raw, email: user.email };
}

// The mail leaves through the outbox, so the request answers at once and no committed request loses its mail.
export async function requestVerificationMail(em: EntityManager, caller: Caller): Promise<void> {
  await em.transactional(async (tx) => {
    const user = (await findUser(tx, caller.userId))!;
    if (user.email_verified_at) throw conflict('email_already_verified', 'this e-mail address is already verified');
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
    const found = await queryOne(
      tx,
      sql<{ id: string; user_id: string; email: string; used_at: string | null; expires_at: string }>`
        select id, user_id, email, used_at, expires_at from email_verifications where token_hash = ${hashSecret(rawToken)} for update`,
    );
    const row = found && { id: found.id, email: found.email, usedAt: found.used_at, expiresAt: toDate(found.expires_at) };
    const user = found ? await findUser(tx, found.user_id) : undefined;
    if (!row || !user || row.usedAt || row.expiresAt.getTime() < Date.now() || user.email !== row.email) {
      throw invalid('invalid_token', 'this verification link is invalid, used or expired');
    }
    const now = new Date();
    await query(tx, sql`update email_verifications set used_at = ${timestamp(now)} where id = ${row.id}`);
    await updateUser(tx, user.id, { emailVerifiedAt: now, updatedAt: now });
    if (user.last_org_id)
      await recordAudit(tx, {
        orgId: user.last_org_id,
        action: 'auth.email_verified',
        targetId: user.id,
        actor: { userId: user.id, credentialId: null },
      });
  });
}
