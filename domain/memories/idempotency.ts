import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict } from '../errors.ts';
import { query, queryOne, sql } from '../sql.ts';

export const IDEMPOTENCY_WINDOW_HOURS = 24;

// What the first request answered (a memory for a save, the outcome of a batch), replayed to a repeat.
export interface IdempotencyClaim<T> {
  key: string;
  replay: T | null;
}

// Claims the key inside the create's transaction. A concurrent request with the same key waits on the
// row lock until the first commits and then gets the first answer; a key older than 24 hours is reused.
export async function claimIdempotencyKey<T>(
  em: EntityManager,
  orgId: string,
  key: string,
  requestHash: string,
): Promise<IdempotencyClaim<T>> {
  const claimed = await queryOne(
    em,
    sql<{ key: string }>`insert into idempotency_keys (org_id, key, request_hash, status, body, created_at)
        values (${orgId}, ${key}, ${requestHash}, 0, 'null', now())
        on conflict (org_id, key) do update
          set request_hash = excluded.request_hash, status = 0, body = 'null', created_at = now()
          where idempotency_keys.created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})
        returning key`,
  );
  if (claimed) return { key, replay: null };
  const previous = await queryOne(
    em,
    sql<{ request_hash: string; body: T | null }>`select request_hash, body from idempotency_keys where org_id = ${orgId} and key = ${key}`,
  );
  if (!previous || previous.body === null)
    throw conflict('idempotency_key_in_use', 'a request with this Idempotency-Key is still in progress');
  if (previous.request_hash !== requestHash) {
    throw conflict('idempotency_key_reused', 'this Idempotency-Key was used with a different request body in the last 24 hours');
  }
  return { key, replay: previous.body };
}

export async function storeIdempotentResult(em: EntityManager, orgId: string, key: string, status: number, body: unknown): Promise<void> {
  await query(
    em,
    sql`update idempotency_keys set status = ${status}, body = ${JSON.stringify(body)}::jsonb where org_id = ${orgId} and key = ${key}`,
  );
}
