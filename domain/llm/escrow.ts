import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { openText, sealText } from '../sealing.ts';
import { query, queryOne, sql } from '../sql.ts';
import type { ByokKeys } from './port.ts';

// A caller's own LLM keys must reach background work (a save's enrichment, a merge) without entering the
// workflow history or any log. They are sealed with AES-256-GCM under the server's escrow key into a row
// that the work deletes when it ends; rows whose work never ran expire after an hour.
const ESCROW_TTL_SECONDS = 3600;

export interface Sealed {
  id: string;
  orgId: string;
  sealed: Buffer;
}

// The row id and org are authenticated, so a sealed blob cannot be replayed under another row or org.
export function seal(key: Buffer, id: string, orgId: string, byok: ByokKeys): Sealed {
  return { id, orgId, sealed: sealText(key, `${id}/${orgId}`, JSON.stringify({ p: byok.primary ?? null, a: byok.alternate ?? null })) };
}

function open(key: Buffer, row: Sealed): ByokKeys {
  const plain = JSON.parse(openText(key, `${row.id}/${row.orgId}`, row.sealed)) as { p: string | null; a: string | null };
  return { primary: plain.p ?? undefined, alternate: plain.a ?? undefined };
}

// One INSERT, embeddable in the statement of the write that starts the work.
export function escrowInsert(rows: Sealed[]): RawBuilder<unknown> {
  return sql`insert into llm_key_escrow (id, org_id, sealed, created_at, expires_at)
    select id, org_id, sealed, now(), now() + make_interval(secs => ${ESCROW_TTL_SECONDS})
      from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.orgId)}::uuid[],
        ${rows.map((r) => r.sealed)}::bytea[]) as r(id, org_id, sealed)`;
}

// The keys, or null when the row is gone (the work already ended, or it expired).
export async function withdrawKeys(em: EntityManager, key: Buffer, id: string, orgId: string): Promise<ByokKeys | null> {
  const row = await queryOne(
    em,
    sql<{ sealed: Buffer }>`select sealed from llm_key_escrow where id = ${id} and org_id = ${orgId} and expires_at > now()`,
  );
  return row ? open(key, { id, orgId, sealed: row.sealed }) : null;
}

// Rows whose work never came for them expire, and maintenance sweeps them (domain/maintenance/sweep.ts).
export async function releaseKeys(em: EntityManager, orgId: string, id: string): Promise<void> {
  await query(em, sql`delete from llm_key_escrow where org_id = ${orgId} and id = ${id}`);
}
