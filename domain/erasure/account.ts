import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../audit/record.ts';
import { AppError, conflict } from '../errors.ts';
import { readCounters } from '../counters.ts';
import { ORG_COUNTERS } from '../store/counters.ts';
import { scheduleOrgErasure } from './orgs.ts';
import { toDate } from '../sql.ts';
import { credentialCountsOf, deleteUser, findCredential, findUser, lockMembershipsAround } from '../accounts/rows.ts';
import type { Caller } from '../accounts/caller.ts';
import { normalizeEmail } from '../accounts/signup.ts';
import { verifyPassword } from '../accounts/passwords.ts';

export interface DeletionCounts {
  orgs_deleted: number;
  memories_deleted: number;
  memberships_removed: number;
  api_tokens_deleted: number;
  sessions_ended: number;
}

// How the caller proves, once more, that they are the account's owner.
export type DeletionProof = { password: string } | { confirmEmail: string };

// An account without a password (signed up through the identity provider) re-authenticates by a sign-in this
// recent: its session must be younger than this, and it types its e-mail to confirm.
const FRESH_SIGN_IN_MS = 15 * 60 * 1000;

// Deletes the user after re-checking who asks: the password, or for an account that has none, a fresh
// sign-in through the identity provider and the account's e-mail typed out. Orgs where the user is the only
// member are deleted with everything in them (erased in the background: orgs.ts); in orgs with other members the
// user just leaves, unless they are its last owner: then nothing is deleted (409 sole_owner) until ownership is
// handed over.
export async function deleteAccount(em: EntityManager, caller: Caller, proof: DeletionProof): Promise<DeletionCounts> {
  const user = await findUser(em, caller.userId);
  if (!user) throw new AppError('forbidden', 'password_mismatch', 'the password does not match this account');
  if (user.password_hash) {
    if (!('password' in proof) || !(await verifyPassword(user.password_hash, proof.password))) {
      throw new AppError('forbidden', 'password_mismatch', 'the password does not match this account');
    }
  } else {
    const session = caller.credentialKind === 'session' && caller.credentialId ? await findCredential(em, caller.credentialId) : null;
    if (!session || toDate(session.created_at).getTime() < Date.now() - FRESH_SIGN_IN_MS) {
      throw new AppError(
        'forbidden',
        'reauthentication_required',
        'this account has no password: sign in through the identity provider again, then delete within 15 minutes',
      );
    }
    if (!('confirmEmail' in proof) || normalizeEmail(proof.confirmEmail) !== user.email) {
      throw new AppError('forbidden', 'email_mismatch', "send confirm_email with this account's e-mail address");
    }
  }
  return em.transactional(async (tx) => {
    // Every membership of every org the user is in, locked in (org, user) order, as removeMember locks an
    // org's: two co-owners deleting their accounts at once then run one after the other, and the second
    // sees that it would be the last owner. (A row deleted by the first is skipped once its lock is free.)
    const rows = await lockMembershipsAround(tx, caller.userId);
    const memberships = rows
      .filter((r) => r.user_id === caller.userId)
      .map((m) => {
        const orgRows = rows.filter((r) => r.org_id === m.org_id);
        return { org_id: m.org_id, role: m.role, members: orgRows.length, owners: orgRows.filter((r) => r.role === 'owner').length };
      });
    const blocked = memberships.find((m) => m.members > 1 && m.role === 'owner' && m.owners === 1);
    if (blocked)
      throw conflict(
        'sole_owner',
        `you are the only owner of org ${blocked.org_id}, which has other members: make another member owner first`,
      );
    const creds = await credentialCountsOf(tx, caller.userId);
    const counts: DeletionCounts = {
      orgs_deleted: 0,
      memories_deleted: 0,
      memberships_removed: 0,
      api_tokens_deleted: creds.api,
      sessions_ended: creds.sessions,
    };
    for (const m of memberships) {
      if (m.members === 1) {
        const live = (await readCounters(tx, m.org_id)).get(ORG_COUNTERS.live) ?? 0;
        await scheduleOrgErasure(tx, m.org_id, live);
        counts.memories_deleted += live;
        counts.orgs_deleted += 1;
      } else {
        await recordAudit(tx, {
          orgId: m.org_id,
          action: 'org.member.remove',
          targetId: caller.userId,
          actor: { userId: caller.userId, credentialId: caller.credentialId },
          details: { reason: 'account deleted' },
        });
        counts.memberships_removed += 1;
      }
    }
    await deleteUser(tx, caller.userId);
    return counts;
  });
}
