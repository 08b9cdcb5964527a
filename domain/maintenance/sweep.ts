import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { IDEMPOTENCY_WINDOW_HOURS } from '../memories/idempotency.ts';
import { query, sql } from '../sql.ts';

// Rows whose purpose has passed. The audit log, webhook deliveries and exports are records the org reads,
// so they are kept; this removes only working state nobody reads once it is done.
export const SWEEP_BATCH = 5000;
export const DISPATCHED_RETENTION_DAYS = 7;

const RULES: Record<string, RawBuilder<unknown>> = {
  // The replay window is over; a new request with the key starts afresh anyway.
  idempotency_keys: sql`created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})`,
  // Sealed BYOK keys whose work never came for them.
  llm_key_escrow: sql`expires_at < now()`,
  oauth_requests: sql`expires_at < now()`,
  // Started workflows: their job row and their events have served; kept a week for operators.
  outbox: sql`dispatched_at < now() - make_interval(days => ${DISPATCHED_RETENTION_DAYS})`,
  events: sql`dispatched_at < now() - make_interval(days => ${DISPATCHED_RETENTION_DAYS})`,
  // Write-limit windows of credentials idle for over an hour hold nothing the 60-second window needs.
  rate_limit_windows: sql`coalesce((select max(h) from unnest(hits) h), '-infinity') < now() - interval '1 hour'`,
};

export type SweepCounts = Record<string, number>;

export interface Sweep {
  counts: SweepCounts;
  // Some table filled a whole batch: there may be more.
  more: boolean;
}

// One batch per table; the caller repeats while `more`.
export async function sweepOnce(em: EntityManager): Promise<Sweep> {
  const counts: SweepCounts = {};
  for (const [table, rule] of Object.entries(RULES)) {
    const deleted = await query(
      em,
      sql<{ n: number }>`with gone as (delete from ${sql.table(table)} where ctid = any(array(select ctid from ${sql.table(table)} where ${rule} limit ${SWEEP_BATCH})) returning 1)
        select count(*)::int as n from gone`,
    );
    counts[table] = deleted[0]!.n;
  }
  return { counts, more: Object.values(counts).some((n) => n >= SWEEP_BATCH) };
}
