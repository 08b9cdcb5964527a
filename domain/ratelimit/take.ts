import type { EntityManager } from '@mikro-orm/postgresql';
import { queryOne, sql } from '../sql.ts';

export interface SlotDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

// At most `limit` writes per key in any rolling 60 s, counted in PostgreSQL so that every API process
// shares one window (the function lives in migrations/0001_foundation.ts).
export async function takeWriteSlot(em: EntityManager, key: string, limit: number): Promise<SlotDecision> {
  const row = (await queryOne(em, sql<{ allowed: boolean; retry_after_ms: string }>`select allowed, retry_after_ms from rate_limit_take(${key}, ${limit}::int, interval '60 seconds')`))!;
  return { allowed: row.allowed, retryAfterSeconds: Math.ceil(Number(row.retry_after_ms) / 1000) };
}
