import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../audit/record.ts';
import { newId } from '../ids.ts';
import { query, queryOne, sql } from '../sql.ts';
import { hashSecret, issueSecret } from '../accounts/secrets.ts';
import { insertCredential, liveApiTokenCount, revokeCredential } from '../accounts/rows.ts';
import { MAX_LIVE_TOKENS } from '../accounts/tokens.ts';
import { oauthError } from './errors.ts';

// A grant is one API token of the service's own kind, named after the client, that lives an hour (the access
// token), and a refresh token kept beside it that renews it. Both hang off the token's one row: revoking it on
// the tokens page ends the access token at once and refuses the refresh token from then on.
export interface GrantLifetimes {
  accessSeconds: number;
  refreshDays: number;
}

export interface IssuedGrant {
  credentialId: string;
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  scope: string;
}

export interface GrantInput {
  clientId: string;
  clientName: string;
  userId: string;
  orgId: string;
  scope: string;
  resource: string | null;
}

const grantTokenName = (clientName: string): string => `OAuth: ${clientName}`.slice(0, 200);

const newRefreshToken = (): string => randomBytes(32).toString('base64url');

export async function revokeGrant(
  tx: EntityManager,
  grant: { credentialId: string; orgId: string; userId: string },
  reason: string,
): Promise<void> {
  await revokeCredential(tx, grant.credentialId);
  await recordAudit(tx, {
    orgId: grant.orgId,
    action: 'token.revoke',
    targetId: grant.credentialId,
    actor: { userId: grant.userId, credentialId: null },
    details: { reason },
  });
}

// Inside the caller's transaction. A client authorized again by the same user in the same org replaces what it
// held, so each client is one row on the tokens page.
export async function openGrant(tx: EntityManager, input: GrantInput, lifetimes: GrantLifetimes): Promise<IssuedGrant> {
  const held = await query(
    tx,
    sql<{ credential_id: string }>`select g.credential_id from oauth_grants g join credentials c on c.id = g.credential_id
      where g.client_id = ${input.clientId} and c.user_id = ${input.userId} and c.org_id = ${input.orgId} and c.revoked_at is null`,
  );
  for (const row of held)
    await revokeGrant(tx, { credentialId: row.credential_id, orgId: input.orgId, userId: input.userId }, 'replaced_by_new_authorization');
  if ((await liveApiTokenCount(tx, input.userId, input.orgId)) >= MAX_LIVE_TOKENS)
    throw oauthError(
      'invalid_grant',
      `the user holds ${MAX_LIVE_TOKENS} live API tokens in this organization: revoke unused ones on the tokens page, then connect again`,
    );
  const access = issueSecret();
  const refresh = newRefreshToken();
  const credentialId = newId();
  const name = grantTokenName(input.clientName);
  const now = new Date();
  await insertCredential(tx, {
    id: credentialId,
    kind: 'api',
    orgId: input.orgId,
    userId: input.userId,
    name,
    prefix: access.prefix,
    secretHash: access.hash,
    createdAt: now,
    lastUsedAt: null,
    expiresAt: new Date(now.getTime() + lifetimes.accessSeconds * 1000),
  });
  await query(
    tx,
    sql`insert into oauth_grants (credential_id, client_id, refresh_hash, refresh_expires_at, scope, resource)
      values (${credentialId}, ${input.clientId}, ${hashSecret(refresh)}, now() + make_interval(days => ${lifetimes.refreshDays}),
        ${input.scope}, ${input.resource})`,
  );
  await recordAudit(tx, {
    orgId: input.orgId,
    action: 'token.create',
    targetId: credentialId,
    actor: { userId: input.userId, credentialId: null },
    details: { name, via: 'oauth', client_id: input.clientId },
  });
  return { credentialId, accessToken: access.raw, refreshToken: refresh, expiresIn: lifetimes.accessSeconds, scope: input.scope };
}

interface GrantRow {
  credential_id: string;
  client_id: string;
  user_id: string;
  org_id: string;
  scope: string;
  live: boolean;
  member: boolean;
}

type Outcome = { grant: IssuedGrant } | { refused: string };

// Rotation (OAuth 2.1 4.3.1): each refresh token works once and is replaced, with a new access token in the same
// row. One already replaced coming back means two parties hold it, so the grant is revoked for both.
export async function refreshGrant(
  em: EntityManager,
  input: { refreshToken: string; clientId: string },
  lifetimes: GrantLifetimes,
): Promise<IssuedGrant> {
  const hash = hashSecret(input.refreshToken);
  const outcome = await em.transactional(async (tx): Promise<Outcome> => {
    const row = await queryOne(
      tx,
      sql<GrantRow>`select g.credential_id, g.client_id, c.user_id, c.org_id, g.scope,
          (c.revoked_at is null and g.refresh_expires_at > now()) as live,
          exists (select 1 from memberships m where m.org_id = c.org_id and m.user_id = c.user_id) as member
        from oauth_grants g join credentials c on c.id = g.credential_id where g.refresh_hash = ${hash} for update of g`,
    );
    if (!row) {
      const reused = await queryOne(
        tx,
        sql<{ credential_id: string; user_id: string; org_id: string }>`select g.credential_id, c.user_id, c.org_id from oauth_grants g
          join credentials c on c.id = g.credential_id where g.previous_refresh_hash = ${hash} and c.revoked_at is null`,
      );
      if (!reused) return { refused: 'the refresh token is unknown, revoked or expired' };
      await revokeGrant(tx, { credentialId: reused.credential_id, orgId: reused.org_id, userId: reused.user_id }, 'refresh_token_reused');
      return { refused: 'the refresh token was already used once, so the grant is revoked: authorize again' };
    }
    if (row.client_id !== input.clientId) return { refused: 'the refresh token was issued to another client' };
    if (!row.live || !row.member) return { refused: 'the refresh token is unknown, revoked or expired' };
    const access = issueSecret();
    const refresh = newRefreshToken();
    await query(
      tx,
      sql`update credentials set secret_hash = ${access.hash}, prefix = ${access.prefix},
          expires_at = now() + make_interval(secs => ${lifetimes.accessSeconds})
        where id = ${row.credential_id}`,
    );
    await query(
      tx,
      sql`update oauth_grants set previous_refresh_hash = refresh_hash, refresh_hash = ${hashSecret(refresh)},
          refresh_expires_at = now() + make_interval(days => ${lifetimes.refreshDays}) where credential_id = ${row.credential_id}`,
    );
    return {
      grant: {
        credentialId: row.credential_id,
        accessToken: access.raw,
        refreshToken: refresh,
        expiresIn: lifetimes.accessSeconds,
        scope: row.scope,
      },
    };
  });
  if ('refused' in outcome) throw oauthError('invalid_grant', outcome.refused);
  return outcome.grant;
}
