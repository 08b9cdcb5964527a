import type { EntityManager } from '@mikro-orm/postgresql';
import { query, queryOne, sql } from '../sql.ts';
import type { CredentialKind, Plan, Role } from './entities.ts';
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

// A credential counts only while it is unrevoked, unexpired and its user still belongs to its org.
// One indexed lookup per request, no cache: revocation takes effect on the very next request.
export async function resolveCredential(em: EntityManager, raw: string, kind: CredentialKind): Promise<Caller | null> {
  if (!raw.startsWith(TOKEN_PREFIX) || raw.length > 200) return null;
  const row = await queryOne(
    em,
    sql<CredentialRow>`select id, user_id, org_id, role, plan, stale from credential_lookup(${hashSecret(raw)}, ${kind})`,
  );
  if (!row) return null;
  // last_used_at is kept to the minute so that reads do not turn into a write each.
  if (row.stale) await query(em, sql`update credentials set last_used_at = now() where id = ${row.id} and (last_used_at is null or last_used_at < now() - interval '60 seconds')`);
  return { userId: row.user_id, orgId: row.org_id, role: row.role, plan: row.plan, credentialId: row.id, credentialKind: kind };
}
