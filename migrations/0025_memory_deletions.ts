import { Migration } from '@mikro-orm/migrations';

// Deletions by filter: one row per request, whose workflow deletes the matching memories in batches and counts them
// here, so the caller can follow its progress (domain/memories/delete-by-filter.ts).
export class Migration0025MemoryDeletions extends Migration {
  override up(): void {
    this.addSql(`
      create table memory_deletions (
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        id uuid not null,
        filters jsonb not null,
        status text not null default 'pending' check (status in ('pending', 'running', 'completed')),
        matched integer not null,
        deleted integer not null default 0,
        requested_by uuid,
        requested_with uuid,
        created_at timestamptz(3) not null default now(),
        completed_at timestamptz(3),
        constraint memory_deletions_pk primary key (org_id, id)
      )`);
    this.addSql(`create index memory_deletions_org_idx on memory_deletions (org_id, created_at desc)`);
  }
}
