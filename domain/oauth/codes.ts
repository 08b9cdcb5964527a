import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../accounts/caller.ts';
import { hashSecret } from '../accounts/secrets.ts';
import { query, queryOne, sql } from '../sql.ts';
import { oauthError } from './errors.ts';
import { openGrant, revokeGrant, type GrantLifetimes, type IssuedGrant } from './grants.ts';
import { verifierMatches } from './pkce.ts';

// A code is exchanged at once by the client that asked for it; a minute covers a slow hop through the browser.
const CODE_TTL_SECONDS = 60;

export interface ApprovedRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string | null;
  scope: string;
}

// What the person approved, bound to them and their session's org; only the code's hash is kept.
export async function issueCode(em: EntityManager, caller: Caller, request: ApprovedRequest): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  await em.transactional(async (tx) => {
    await query(
      tx,
      sql`insert into oauth_codes (code_hash, client_id, user_id, org_id, redirect_uri, code_challenge, resource, scope, created_at,
          expires_at)
        values (${hashSecret(code)}, ${request.clientId}, ${caller.userId}, ${caller.orgId}, ${request.redirectUri},
          ${request.codeChallenge},
                ${request.resource}, ${request.scope}, now(), now() + make_interval(secs => ${CODE_TTL_SECONDS}))`,
    );
    await query(tx, sql`update oauth_clients set last_used_at = now() where id = ${request.clientId}`);
  });
  return code;
}

export interface CodeExchange {
  code: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  codeVerifier: string;
  resource: string | null;
}

interface CodeRow {
  client_id: string;
  user_id: string;
  org_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string | null;
  scope: string;
  member: boolean;
}

type Outcome = { grant: IssuedGrant } | { refused: string; code?: 'invalid_target' };

// A code is spent by its first presentation, whatever follows, so a wrong verifier cannot be tried again. A spent
// code presented again means someone else holds it (OAuth 2.1 4.1.3): what it was exchanged for is revoked.
export async function exchangeCode(em: EntityManager, input: CodeExchange, lifetimes: GrantLifetimes): Promise<IssuedGrant> {
  const hash = hashSecret(input.code);
  const outcome = await em.transactional(async (tx): Promise<Outcome> => {
    const code = await queryOne(
      tx,
      sql<CodeRow>`update oauth_codes c set used_at = now() where c.code_hash = ${hash} and c.used_at is null and c.expires_at > now()
        returning c.client_id, c.user_id, c.org_id, c.redirect_uri, c.code_challenge, c.resource, c.scope,
          exists (select 1 from memberships m where m.org_id = c.org_id and m.user_id = c.user_id) as member`,
    );
    if (!code) {
      const spent = await queryOne(
        tx,
        sql<{ credential_id: string; user_id: string; org_id: string }>`select credential_id, user_id, org_id from oauth_codes
          where code_hash = ${hash} and used_at is not null and credential_id is not null`,
      );
      if (spent)
        await revokeGrant(
          tx,
          { credentialId: spent.credential_id, orgId: spent.org_id, userId: spent.user_id },
          'authorization_code_replayed',
        );
      return {
        refused: spent ? 'the code was already used, so the token issued for it is revoked' : 'the code is unknown, used or expired',
      };
    }
    if (code.client_id !== input.clientId) return { refused: 'the code was issued to another client' };
    if (code.redirect_uri !== input.redirectUri) return { refused: 'redirect_uri differs from the one the code was issued for' };
    if (!verifierMatches(input.codeVerifier, code.code_challenge)) return { refused: 'code_verifier does not match the code_challenge' };
    if (input.resource !== null && code.resource !== null && input.resource !== code.resource) {
      return { refused: 'resource differs from the one the code was issued for', code: 'invalid_target' };
    }
    if (!code.member) return { refused: 'the user is no longer a member of the organization' };
    const grant = await openGrant(
      tx,
      {
        clientId: code.client_id,
        clientName: input.clientName,
        userId: code.user_id,
        orgId: code.org_id,
        scope: code.scope,
        resource: code.resource ?? input.resource,
      },
      lifetimes,
    );
    await query(tx, sql`update oauth_codes set credential_id = ${grant.credentialId} where code_hash = ${hash}`);
    return { grant };
  });
  if ('refused' in outcome) throw oauthError(outcome.code ?? 'invalid_grant', outcome.refused);
  return outcome.grant;
}
