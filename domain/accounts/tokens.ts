import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from './caller.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { queryOne, sql, toDate, toDateOrNull } from '../sql.ts';
import { insertCredential, liveApiTokenCount, liveApiTokens, revokeCredential, type TokenRow } from './rows.ts';
import { hasRole } from './roles.ts';
import { issueSecret } from './secrets.ts';

export interface TokenView {
  id: string;
  prefix: string;
  name: string | null;
  userId: string;
  // Epoch milliseconds, as in the API.
  createdAt: number;
  lastUsedAt: number | null;
  expiresAt: number | null;
}

export interface IssuedToken extends TokenView {
  raw: string;
}

const view = (r: TokenRow): TokenView => ({
  id: r.id,
  prefix: r.prefix,
  name: r.name,
  userId: r.user_id,
  createdAt: toDate(r.created_at).getTime(),
  lastUsedAt: toDateOrNull(r.last_used_at)?.getTime() ?? null,
  expiresAt: toDateOrNull(r.expires_at)?.getTime() ?? null,
});

// Owners and admins see and revoke every API token of the org; members only their own.
export async function listTokens(em: EntityManager, caller: Caller): Promise<TokenView[]> {
  const rows = await liveApiTokens(em, caller.orgId, hasRole(caller, 'admin') ? null : caller.userId);
  return rows.map(view);
}

// Live API tokens a user may hold in one org: the token list stays bounded, and a leaked script that mints
// tokens in a loop stops here.
export const MAX_LIVE_TOKENS = 100;

export async function createToken(
  em: EntityManager,
  caller: Caller,
  input: { name?: string | undefined; expiresInDays?: number | undefined },
): Promise<IssuedToken> {
  const secret = issueSecret();
  const now = new Date();
  return em.transactional(async (tx) => {
    if ((await liveApiTokenCount(tx, caller.userId, caller.orgId)) >= MAX_LIVE_TOKENS)
      throw conflict('token_limit', `at most ${MAX_LIVE_TOKENS} live API tokens per user in an org: revoke unused ones first`);
    const token = await insertCredential(tx, {
      id: newId(),
      kind: 'api' as const,
      orgId: caller.orgId,
      userId: caller.userId,
      name: input.name ?? null,
      prefix: secret.prefix,
      secretHash: secret.hash,
      createdAt: now,
      lastUsedAt: null,
      expiresAt: input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * 86_400_000) : null,
    });
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'token.create',
      targetId: token.id,
      actor: actorOf(caller),
      details: { name: token.name },
    });
    return { ...view(token), raw: secret.raw };
  });
}

export async function revokeToken(em: EntityManager, caller: Caller, tokenId: string): Promise<void> {
  await em.transactional(async (tx) => {
    const token = await queryOne(
      tx,
      sql<{ id: string; userId: string }>`select id, user_id as "userId" from credentials
        where id = ${tokenId} and org_id = ${caller.orgId} and kind = 'api' and revoked_at is null`,
    );
    if (!token) throw notFound('token', tokenId);
    if (token.userId !== caller.userId && !hasRole(caller, 'admin')) {
      throw forbidden("revoking another member's token needs the admin or owner role");
    }
    await revokeCredential(tx, token.id);
    await recordAudit(tx, { orgId: caller.orgId, action: 'token.revoke', targetId: token.id, actor: actorOf(caller) });
  });
}
