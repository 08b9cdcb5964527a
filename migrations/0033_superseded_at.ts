import { Migration } from '@mikro-orm/migrations';

// When a memory was superseded (a consolidation merge, an extraction's update or delete), so that a search as of
// an earlier time still finds it (domain/search/as-of.ts). A superseded memory cannot be edited, so its updated_at
// is still the time it was superseded: the backfill takes it. Only superseded rows are rewritten.
export class Migration0033SupersededAt extends Migration {
  override up(): void {
    this.addSql(`alter table memories add column superseded_at timestamptz(3)`);
    this.addSql(`update memories set superseded_at = updated_at where superseded_by is not null`);
  }
}
