import { Migration } from '@mikro-orm/migrations';

// When what a memory tells happened (event time), which may be long before it was saved: a conversation imported
// today about last March. Nullable, so adding it rewrites nothing: a memory saved before it stands at its
// created_at (every read takes coalesce(occurred_at, created_at)); every save since sets it.
export class Migration0026OccurredAt extends Migration {
  override up(): void {
    this.addSql(`alter table memories add column occurred_at timestamptz(3)`);
  }
}
