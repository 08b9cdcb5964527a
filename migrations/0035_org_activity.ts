import { Migration } from '@mikro-orm/migrations';

// The orgs with requests under way in each API process (domain/org-activity-board.ts): a row per process, written a
// few times a second while it serves any org, read by the worker so that an export's pages leave room for an org
// busy in the API. Unlogged: it is only ever a second old, and a crash may lose it.
export class Migration0035OrgActivity extends Migration {
  override up(): void {
    this.addSql(`
      create unlogged table org_activity (
        process text primary key,
        org_ids uuid[] not null,
        seen_at timestamptz not null default now()
      )`);
  }
}
