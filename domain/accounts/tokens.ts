import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from './caller.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { Credential } from './tables.ts';
import { hasRole } from './roles.ts';
import { issueSecret } from './secrets.ts';

export interface TokenView {
  id: string;
  prefix: string;
  name: string | null;
  userId: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
}

export interface IssuedToken extends TokenView {
  raw: string;
}

const view = (c: Credential): TokenView => ({
  id: c.id,
  prefix: c.prefix,
  name: c.name ?? null,
  userId: c.userId,
  createdAt: c.createdAt,
  lastUsedAt: c.lastUsedAt ?? null,
  expiresAt: c.expiresAt ?? null,
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

export async function createToken(em: EntityManager, caller: Caller, input: { name?: string | undefined; expiresInDays?: number | undefined }): Promise<IssuedToken> {
  const secret = issueSecret();
  const now = new Date();
  return em.transactional(async (tx) => {
    const live = await tx.count(Credential, { orgId: caller.orgId, userId: caller.userId, kind: 'api', revokedAt: null });
    if (live >= MAX_LIVE_TOKENS) throw conflict('token_limit', `at most ${MAX_LIVE_TOKENS} live API tokens per user in an org: revoke unused ones first`);
    const token = tx.create(Credential, {
      id: newId(),
      kind: 'api',
      orgId: caller.orgId,
      userId: caller.userId,
      name: input.name ?? null,
      prefix: secret.prefix,
      secretHash: secret.hash,
      createdAt: now,
      lastUsedAt: null,
      expiresAt: input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * 86_400_000) : null,
      revokedAt: null,
    });
    await recordAudit(tx, { orgId: caller.orgId, action: 'token.create', targetId: token.id, actor: actorOf(caller), details: { name: token.name ?? null } });
    return { ...view(token), raw: secret.raw };
  });
}

export async function revokeToken(em: EntityManager, caller: Caller, tokenId: string): Promise<void> {
  await em.transactional(async (tx) => {
    const token = await tx.findOne(Credential, { id: tokenId, orgId: caller.orgId, kind: 'api', revokedAt: null });
    if (!token) throw notFound('token', tokenId);
    if (token.userId !== caller.userId && !hasRole(caller, 'admin')) {
      throw forbidden("revoking another member's token needs the admin or owner role");
    }
    token.revokedAt = new Date();
    await recordAudit(tx, { orgId: caller.orgId, action: 'token.revoke', targetId: token.id, actor: actorOf(caller) });
  });
}
