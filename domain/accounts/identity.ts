import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../audit/record.ts';
import { invalid } from '../errors.ts';
import { newId } from '../ids.ts';
import { query, queryOne, sql } from '../sql.ts';
import {
  emailInUse,
  findUser,
  findUserByEmail,
  insertMembership,
  insertOrg,
  insertUser,
  orgsOfUser,
  revokeCredentialsOf,
  slugTaken,
  updateUser,
} from './rows.ts';
import { openSession, type SessionIssued } from './sessions.ts';
import { hashSecret } from './secrets.ts';
import { normalizeEmail } from './signup.ts';
import { slugify, withSuffix } from './slugs.ts';

export const OAUTH_REQUEST_TTL_MS = 10 * 60 * 1000;

export interface PendingAuthorization {
  nonce: string;
  codeVerifier: string;
}

export async function rememberAuthorization(em: EntityManager, state: string, pending: PendingAuthorization): Promise<void> {
  await query(
    em,
    sql`insert into oauth_requests (state_hash, nonce, code_verifier, created_at, expires_at)
        values (${hashSecret(state)}, ${pending.nonce}, ${pending.codeVerifier}, now(),
          now() + make_interval(secs => ${OAUTH_REQUEST_TTL_MS / 1000}))`,
  );
}

// Each authorization request can be completed once: a replayed callback finds nothing.
export async function takeAuthorization(em: EntityManager, state: string): Promise<PendingAuthorization> {
  const row = await queryOne(
    em,
    sql<{
      nonce: string;
      code_verifier: string;
    }>`delete from oauth_requests where state_hash = ${hashSecret(state)} and expires_at > now() returning nonce, code_verifier`,
  );
  if (!row) throw invalid('invalid_state', 'this sign-in attempt is unknown, used or expired; start again');
  return { nonce: row.nonce, codeVerifier: row.code_verifier };
}

export interface Identity {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

// The linked user; else the user with this verified e-mail (linked now); else a new user with an org of
// their own. An unverified e-mail never links to an existing account.
export async function signInWithIdentity(em: EntityManager, identity: Identity): Promise<SessionIssued> {
  const { user, membership } = await em.transactional(async (tx) => {
    const linked = await queryOne(
      tx,
      sql<{ user_id: string }>`select user_id from user_identities where issuer = ${identity.issuer} and subject = ${identity.subject}`,
    );
    let user = linked ? (await findUser(tx, linked.user_id))! : null;
    const email = identity.email ? normalizeEmail(identity.email) : null;
    if (!user && email && identity.emailVerified) user = (await findUserByEmail(tx, email)) ?? null;
    const now = new Date();
    if (!user) {
      if (!email) throw invalid('email_missing', 'the identity provider did not share an e-mail address');
      if (await emailInUse(tx, email))
        throw invalid('email_unverified', 'an account with this e-mail exists; the identity provider has not verified the address');
      const name = identity.name?.trim() || email.split('@')[0]!;
      let slug = slugify(`${name} org`);
      if (await slugTaken(tx, slug)) slug = withSuffix(slug.slice(0, 71));
      const org = await insertOrg(tx, { id: newId(), slug, name: `${name}'s org`.slice(0, 200), now });
      const emailVerifiedAt = identity.emailVerified ? now : null;
      user = await insertUser(tx, {
        id: newId(),
        email,
        name,
        passwordHash: null,
        emailVerifiedAt,
        lastLoginAt: null,
        lastOrgId: org.id,
        now,
      });
      await insertMembership(tx, { orgId: org.id, userId: user.id, role: 'owner', now });
      await recordAudit(tx, {
        orgId: org.id,
        action: 'user.signup',
        targetId: user.id,
        actor: { userId: user.id, credentialId: null },
        details: { via: 'oidc' },
      });
      await recordAudit(tx, {
        orgId: org.id,
        action: 'org.create',
        targetId: org.id,
        actor: { userId: user.id, credentialId: null },
        details: { slug },
      });
    }
    if (!linked) {
      await query(
        tx,
        sql`insert into user_identities (issuer, subject, user_id, created_at)
          values (${identity.issuer}, ${identity.subject}, ${user.id}, now())`,
      );
      if (identity.emailVerified && !user.email_verified_at) {
        // A local account whose e-mail was never verified may have been made by someone else in the owner's
        // name (sign up as victim@corp, keep the password, wait). The provider has just proved who owns the
        // address: the account becomes theirs alone, so every way in that its maker could hold is closed:
        // the password is cleared, and every session and API token is revoked.
        if (user.password_hash) {
          await updateUser(tx, user.id, { passwordHash: null });
          await revokeCredentialsOf(tx, user.id, null);
          if (user.last_org_id)
            await recordAudit(tx, {
              orgId: user.last_org_id,
              action: 'user.claimed_by_identity',
              targetId: user.id,
              actor: { userId: user.id, credentialId: null },
              details: { issuer: identity.issuer },
            });
        }
        await updateUser(tx, user.id, { emailVerifiedAt: now });
      }
    }
    const memberships = (await orgsOfUser(tx, user.id)).map((o) => ({ orgId: o.id, role: o.role }));
    const membership = memberships.find((m) => m.orgId === user!.last_org_id) ?? memberships[0];
    if (!membership) throw invalid('no_organization', 'this account belongs to no organization');
    return { user, membership };
  });
  return openSession(em, user, membership);
}
