import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from './caller.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { query, queryOne, sql } from '../sql.ts';
import { insertCredential, timestamp } from './rows.ts';
import { Credential } from './tables.ts';
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

const view = (c: Pick<Credential, 'id' | 'prefix' | 'name' | 'userId' | 'createdAt' | 'lastUsedAt' | 'expiresAt'>): TokenView => ({
  id: c.id,
  prefix: c.prefix,
  name: c.name ?? null,
  userId: c.userId,
  createdAt: c.createdAt.getTime(),
  lastUsedAt: c.lastUsedAt?.getTime() ?? null,
  expiresAt: c.expiresAt?.getTime() ?? null,
});

// Owners and admins see and revoke every API token of the org; members only their own.
export async function listTokens(em: EntityManager, caller: Caller): Promise<TokenView[]> {
  const where = hasRole(caller, 'admin')
    ? { orgId: caller.orgId, kind: 'api' as const, revokedAt: null }
    : { orgId: caller.orgId, userId: caller.userId, kind: 'api' as const, revokedAt: null };
  const rows = await em.find(Credential, where, { orderBy: { createdAt: 'desc', id: 'desc' } });
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
    const live = (await queryOne(
      tx,
      sql<{ n: number }>`select count(*)::int as n from credentials
        where org_id = ${caller.orgId} and user_id = ${caller.userId} and kind = 'api' and revoked_at is null`,
    ))!.n;
    if (live >= MAX_LIVE_TOKENS)
      throw conflict('token_limit', `at most ${MAX_LIVE_TOKENS} live API tokens per user in an org: revoke unused ones first`);
    const token = {
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
    };
    await insertCredential(tx, token);
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'token.create',
      targetId: token.id,
      actor: actorOf(caller),
      details: { name: token.name ?? null },
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
    await query(tx, sql`update credentials set revoked_at = ${timestamp(new Date())} where id = ${token.id}`);
    await recordAudit(tx, { orgId: caller.orgId, action: 'token.revoke', targetId: token.id, actor: actorOf(caller) });
  });
}
