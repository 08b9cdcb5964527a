import { Migration } from '@mikro-orm/migrations';

// Export jobs and their output, written a page at a time so that neither building nor downloading an
// export holds it whole in memory.
export class Migration0008Exports extends Migration {
  override up(): void {
    this.addSql(`
      create table export_jobs (
        id uuid primary key,
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        format text not null check (format in ('ndjson', 'csv')),
        filters jsonb not null,
        status text not null default 'pending' check (status in ('pending', 'completed', 'failed')),
        row_count integer not null default 0,
        error text,
        created_at timestamptz(3) not null,
        completed_at timestamptz(3)
      )`);
    this.addSql(`create index export_jobs_org_idx on export_jobs (org_id, created_at desc)`);
    this.addSql(`
      create table export_chunks (
        export_id uuid not null references export_jobs (id) on delete cascade deferrable initially deferred,
        seq integer not null,
        data text not null,
        constraint export_chunks_pk primary key (export_id, seq)
      )`);
  }
}
