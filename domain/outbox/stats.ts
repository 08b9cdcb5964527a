import type { EntityManager } from '@mikro-orm/postgresql';
import { queryOne, sql } from '../sql.ts';

export interface OutboxStats {
  pending: number;
  oldestPendingSeconds: number;
  failed: number;
}

// How far the relay is behind, for metrics: both counts read the outbox's partial indexes only.
export async function outboxStats(em: EntityManager): Promise<OutboxStats> {
  const row = await queryOne(
    em,
    sql<{ pending: string; oldest: number | null; failed: string }>`select
        (select count(*) from outbox where dispatched_at is null and failed_at is null) as pending,
        (select extract(epoch from now() - min(created_at))::float8 from outbox
        where dispatched_at is null and failed_at is null) as oldest,
        (select count(*) from outbox where failed_at is not null) as failed`,
  );
  return { pending: Number(row!.pending), oldestPendingSeconds: row!.oldest ?? 0, failed: Number(row!.failed) };
}
