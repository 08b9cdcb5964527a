import { Migration } from '@mikro-orm/migrations';

// The outbox relay no longer holds a transaction while it calls Temporal (issue 11): a row is claimed for a
// while (`claimed_until`), dispatched outside any transaction, then marked. A row that keeps failing waits
// longer each time (`next_attempt_at`) and, after its last attempt, is parked as failed (`failed_at`, with
// `last_error`) instead of being retried ahead of the rows behind it forever.
export class Migration0012OutboxLeases extends Migration {
  override up(): void {
    this.addSql(
      `alter table outbox add column claimed_until timestamptz(3), add column next_attempt_at timestamptz(3), add column failed_at timestamptz(3)`,
    );
    this.addSql(`drop index outbox_pending_idx`);
    this.addSql(`create index outbox_pending_idx on outbox (created_at, id) where dispatched_at is null and failed_at is null`);
    this.addSql(`create index outbox_failed_idx on outbox (failed_at) where failed_at is not null`);
  }
}
