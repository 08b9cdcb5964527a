import type pg from 'pg';
import { expect } from 'vitest';
import { eventually } from './stack.ts';

// Waits until every outbox row is dispatched, failing at once if any is parked as failed.
export async function untilOutboxDrained(db: pg.Client, timeoutMs: number): Promise<void> {
  await eventually(async () => {
    const { rows } = await db.query<{ pending: number; failed: number }>(
      `select count(*) filter (where dispatched_at is null and failed_at is null)::int as pending,
              count(*) filter (where failed_at is not null)::int as failed
         from outbox`,
    );
    expect(rows[0]!.failed).toBe(0);
    return rows[0]!.pending === 0;
  }, timeoutMs);
}
