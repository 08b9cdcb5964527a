import type { EntityManager } from '@mikro-orm/postgresql';
import { openText, sealText } from '../sealing.ts';
import { query, sql } from '../sql.ts';

// Endpoints' signing secrets, sealed under the escrow key (domain/sealing.ts) with the endpoint's org and id as
// context. Secrets written before they were sealed stay readable in the plain column until the worker's
// maintenance seals them (sealPlainSecrets).
const context = (orgId: string, id: string) => `webhook-secret/${orgId}/${id}`;

export const sealSecret = (key: Buffer, orgId: string, id: string, secret: string): Buffer => sealText(key, context(orgId, id), secret);

export function secretOf(key: Buffer, row: { orgId: string; id: string; secret: string | null; secretSealed: Buffer | null }): string {
  if (row.secretSealed) return openText(key, context(row.orgId, row.id), row.secretSealed);
  if (row.secret === null) throw new Error(`webhook endpoint ${row.id} has no secret`);
  return row.secret;
}

// Seals up to `batch` plain secrets and clears them; answers how many.
export async function sealPlainSecrets(em: EntityManager, key: Buffer, batch = 500): Promise<number> {
  const rows = await query(
    em,
    sql<{
      org_id: string;
      id: string;
      secret: string;
    }>`select org_id, id, secret from webhook_endpoints where secret is not null limit ${batch}`,
  );
  if (rows.length === 0) return 0;
  const [orgIds, ids] = [rows.map((r) => r.org_id), rows.map((r) => r.id)];
  const sealed = rows.map((r) => sealSecret(key, r.org_id, r.id, r.secret));
  await query(
    em,
    sql`update webhook_endpoints e set secret_sealed = s.sealed, secret = null
      from unnest(${orgIds}::uuid[], ${ids}::uuid[], ${sealed}::bytea[]) as s(org_id, id, sealed)
     where e.org_id = s.org_id and e.id = s.id and e.secret is not null`,
  );
  return rows.length;
}
