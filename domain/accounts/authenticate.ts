import type { EntityManager } from '@mikro-orm/postgresql';
import { GroupedCalls } from '../grouped-calls.ts';
import type { UnauthorizedReason } from '../error-codes.ts';
import { query, queryOne, sql } from '../sql.ts';
import type { CredentialKind, Plan, Role } from './enums.ts';
import type { Caller } from './caller.ts';
import { hashSecret, TOKEN_PREFIX } from './secrets.ts';

interface CredentialRow {
  id: string;
  user_id: string;
  org_id: string;
  role: Role;
  plan: Plan;
  stale: boolean;
}

interface Lookup {
  hash: string;
  kind: CredentialKind;
}

// A credential counts only while it is unrevoked, unexpired and its user still belongs to its org.
// One indexed lookup per request, no cache: revocation takes effect on the very next request. The lookups of
// requests that arrive together share a statement (domain/grouped-calls.ts), which starts after each of them
// arrived, so it sees every revocation committed before. Under a stream of saves, a lookup of its own per save
// cost PostgreSQL a large share of the CPU the save itself took, which is why lookups are grouped.
export class CredentialLookups {
  readonly #groups: GroupedCalls<Lookup, CredentialRow | null>;
  readonly #fork: () => EntityManager;

  constructor(fork: () => EntityManager, maxInflight = 2, maxGroup = 64) {
    this.#fork = fork;
    this.#groups = new GroupedCalls((lookups) => lookUp(fork(), lookups), maxInflight, maxGroup, 'credential lookups');
  }

  async resolve(raw: string, kind: CredentialKind): Promise<Caller | null> {
    if (!raw.startsWith(TOKEN_PREFIX) || raw.length > 200) return null;
    const row = await this.#groups.call({ hash: hashSecret(raw), kind });
    if (!row) return null;
    // last_used_at is kept to the minute so that reads do not turn into a write each.
    if (row.stale)
      await query(
        this.#fork(),
        sql`update credentials set last_used_at = now()
          where id = ${row.id} and (last_used_at is null or last_used_at < now() - interval '60 seconds')`,
      );
    return { userId: row.user_id, orgId: row.org_id, role: row.role, plan: row.plan, credentialId: row.id, credentialKind: kind };
  }

  refusal(raw: string, kind: CredentialKind): Promise<Refusal> {
    return credentialRefusal(this.#fork(), raw, kind);
  }
}

// Why a credential that did not resolve is refused: a 401 says which case it is. Asked only after a lookup failed, so
// it costs the requests that are refused and no other.
export interface Refusal {
  reason: Exclude<UnauthorizedReason, 'no_credential' | 'malformed_header'>;
  message: string;
}

async function credentialRefusal(em: EntityManager, raw: string, kind: CredentialKind): Promise<Refusal> {
  const what = kind === 'api' ? 'API token' : 'session';
  if (!raw.startsWith(TOKEN_PREFIX) || raw.length > 200) {
    const article = kind === 'api' ? 'an' : 'a';
    return { reason: 'unknown_token', message: `this is not ${article} ${what} of this service (they start with ${TOKEN_PREFIX})` };
  }
  const row = await queryOne(
    em,
    sql<{ revoked: boolean; expired: boolean; member: boolean }>`select c.revoked_at is not null as revoked,
        (c.expires_at is not null and c.expires_at <= now()) as expired,
        exists (select 1 from memberships m where m.org_id = c.org_id and m.user_id = c.user_id) as member
      from credentials c where c.secret_hash = ${hashSecret(raw)} and c.kind = ${kind}`,
  );
  const again = kind === 'api' ? 'create a new token' : 'sign in again';
  if (!row) return { reason: 'unknown_token', message: `no ${what} has this value; ${again}` };
  const ended = kind === 'api' ? 'revoked' : 'ended (signed out)';
  if (row.revoked) return { reason: 'revoked_or_expired', message: `this ${what} was ${ended}; ${again}` };
  if (row.expired) return { reason: 'revoked_or_expired', message: `this ${what} has expired; ${again}` };
  if (!row.member) return { reason: 'revoked_or_expired', message: `this ${what}'s user is no longer a member of its organization` };
  return { reason: 'revoked_or_expired', message: `this ${what} is no longer valid; ${again}` };
}

async function lookUp(em: EntityManager, lookups: Lookup[]): Promise<PromiseSettledResult<CredentialRow | null>[]> {
  const rows = await query(
    em,
    sql<CredentialRow & { n: number }>`select n, id, user_id, org_id, role, plan, stale
      from credential_lookups(${lookups.map((l) => l.hash)}::text[], ${lookups.map((l) => l.kind)}::text[])`,
  );
  const byPosition = new Map(rows.map((row) => [row.n, row]));
  return lookups.map((_, i) => ({ status: 'fulfilled', value: byPosition.get(i + 1) ?? null }));
}
