import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../audit/record.ts';
import { invalid } from '../errors.ts';
import { newId } from '../ids.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { query, queryOne, sql, toDate } from '../sql.ts';
import { findUserByEmail, liveApiTokenCount, revokeCredentialsOf, timestamp, updateUser } from './rows.ts';
import { hashPassword } from './passwords.ts';
import { hashSecret, issueSecret } from './secrets.ts';
import { normalizeEmail } from './signup.ts';

const RESET_TTL_MS = 60 * 60 * 1000;
export const PASSWORD_RESET_MAIL_JOB = 'passwordResetMail';

export interface ResetMailArgs {
  email: string;
  mailKey: string;
}

// Always the same work, whether or not the address has an account: one outbox row. The workflow looks the
// account up and sends nothing when there is none, so neither the answer nor its timing tells.
export async function requestPasswordReset(em: EntityManager, email: string): Promise<void> {
  const mailKey = newId();
  await em.transactional(async (tx) => {
    const args: ResetMailArgs = { email: normalizeEmail(email), mailKey };
    await enqueueJobs(tx, [
      {
        orgId: null,
        jobType: PASSWORD_RESET_MAIL_JOB,
        jobKey: `password-reset-mail-${mailKey}`,
        args: [args],
        description: 'send a password reset link, if the address has an account',
      },
    ]);
  });
}

// A fresh single-use reset token for the account with this address, or null when there is none.
export async function issueResetToken(em: EntityManager, email: string): Promise<{ raw: string; email: string } | null> {
  const user = await findUserByEmail(em, normalizeEmail(email));
  if (!user) return null;
  const secret = issueSecret();
  const now = new Date();
  const expiresAt = new Date(now.getTime() + RESET_TTL_MS);
  await query(
    em,
    sql`insert into password_resets (id, user_id, token_hash, created_at, expires_at, used_at)
      values (${newId()}, ${user.id}, ${secret.hash}, ${timestamp(now)}, ${timestamp(expiresAt)}, null)`,
  );
  return { raw: secret.raw, email: user.email };
}

// What a reset did besides setting the password: the cookie sessions it ended, and the API tokens it left
// valid (an agent's tokens are not the browser's; the answer says so, so the owner can revoke them).
export interface ResetOutcome {
  sessionsEnded: number;
  apiTokensKept: number;
}

// Sets the new password and ends every cookie session of the user; API tokens stay valid.
export async function consumePasswordReset(em: EntityManager, rawToken: string, password: string): Promise<ResetOutcome> {
  const tokenHash = hashSecret(rawToken);
  type Reset = { id: string; userId: string; usedAt: string | null; expiresAt: Date };
  const usable = (reset: Reset | null): reset is Reset => reset !== null && !reset.usedAt && reset.expiresAt.getTime() >= Date.now();
  const findReset = async (db: EntityManager, lock: boolean): Promise<Reset | null> => {
    const row = await queryOne(
      db,
      sql<{ id: string; user_id: string; used_at: string | null; expires_at: string }>`select id, user_id, used_at, expires_at
        from password_resets where token_hash = ${tokenHash} ${lock ? sql`for update` : sql``}`,
    );
    return row ? { id: row.id, userId: row.user_id, usedAt: row.used_at, expiresAt: toDate(row.expires_at) } : null;
  };
  const refusal = () => invalid('invalid_token', 'this reset link is invalid, used or expired');
  // The token is checked before the password is hashed, so a guessed or spent token costs a lookup, not an
  // Argon2 hash; it is checked again under the row lock, where a concurrent use of it is decided.
  if (!usable(await findReset(em, false))) throw refusal();
  const passwordHash = await hashPassword(password);
  return em.transactional(async (tx) => {
    const reset = await findReset(tx, true);
    if (!usable(reset)) throw refusal();
    await query(tx, sql`update password_resets set used_at = ${timestamp(new Date())} where id = ${reset.id}`);
    const user = await updateUser(tx, reset.userId, { passwordHash, updatedAt: new Date() });
    const sessionsEnded = await revokeCredentialsOf(tx, user.id, 'session');
    const apiTokensKept = await liveApiTokenCount(tx, user.id, null);
    if (user.last_org_id)
      await recordAudit(tx, {
        orgId: user.last_org_id,
        action: 'auth.password_reset',
        targetId: user.id,
        actor: { userId: user.id, credentialId: null },
      });
    return { sessionsEnded, apiTokensKept };
  });
}
