import { Migration } from '@mikro-orm/migrations';

// The trace a job belongs to (issue 14): the W3C trace context and baggage of the request that wrote the row,
// so the workflow the relay starts later, in another process, continues that request's trace.
export class Migration0014OutboxTraceContext extends Migration {
  override up(): void {
    this.addSql(`alter table outbox add column trace_context jsonb`);
  }
}
