import type { EntityManager } from '@mikro-orm/postgresql';
import { queryOne, sql } from '../sql.ts';

export interface SlotDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

// At most `limit` events per key in any rolling window, counted in PostgreSQL so that every API process
// shares one window (the function lives in migrations/0001_foundation.ts).
export async function takeSlot(em: EntityManager, key: string, limit: number, windowSeconds: number): Promise<SlotDecision> {
  const row = (await queryOne(
    em,
    sql<{ allowed: boolean; retry_after_ms: string }>`select allowed, retry_after_ms from rate_limit_take(${key}, ${limit}::int, make_interval(secs => ${windowSeconds}))`,
  ))!;
  return { allowed: row.allowed, retryAfterSeconds: Math.ceil(Number(row.retry_after_ms) / 1000) };
}

export const takeWriteSlot = (em: EntityManager, key: string, limit: number): Promise<SlotDecision> => takeSlot(em, key, limit, 60);
