import type { EntityManager } from '@mikro-orm/postgresql';
import { queryOne, sql } from '../sql.ts';

export interface SlotDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

// A slot taken (or refused), with what the key has left: events in its window, and seconds until the next one frees.
export interface TakenSlot extends SlotDecision {
  remaining: number;
  resetSeconds: number;
}

// At most `limit` events per key in any rolling window, counted in PostgreSQL so that every API process
// shares one window (the function lives in migrations/0001_foundation.ts).
export async function takeSlot(em: EntityManager, key: string, limit: number, windowSeconds: number): Promise<TakenSlot> {
  const row = (await queryOne(
    em,
    sql<{
      allowed: boolean;
      retry_after_ms: string;
      remaining: number;
      reset_ms: string;
    }>`select allowed, retry_after_ms, remaining, reset_ms
      from rate_limit_take(${key}, ${limit}::int, make_interval(secs => ${windowSeconds}))`,
  ))!;
  const seconds = (ms: string) => Math.ceil(Number(ms) / 1000);
  return {
    allowed: row.allowed,
    retryAfterSeconds: seconds(row.retry_after_ms),
    remaining: row.remaining,
    resetSeconds: seconds(row.reset_ms),
  };
}

// Whether `key` still has room in its window, without spending any: for limits that count only some outcomes
// (failed sign-ins), checked before the work and spent after it.
export async function peekSlot(em: EntityManager, key: string, limit: number, windowSeconds: number): Promise<SlotDecision> {
  const row = await queryOne(
    em,
    sql<{ recent: number; oldest_needed_ms: string | null }>`select cardinality(r.hits) as recent,
        (extract(epoch from (r.hits[cardinality(r.hits) - ${limit}::int + 1] + make_interval(secs => ${windowSeconds}) -
          clock_timestamp())) * 1000)::bigint as oldest_needed_ms
      from (select array(select h from unnest(w.hits) h where h > clock_timestamp() - make_interval(secs => ${windowSeconds})
      order by h) as hits
              from rate_limit_windows w where w.key = ${key}) r`,
  );
  if (!row || row.recent < limit) return { allowed: true, retryAfterSeconds: 0 };
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(Number(row.oldest_needed_ms) / 1000)) };
}
