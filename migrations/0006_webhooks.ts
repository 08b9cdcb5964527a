import { Migration } from '@mikro-orm/migrations';

// Outbound webhook endpoints. The signing secret is kept as issued: Standard Webhooks signs with it, so
// the server needs the key itself, not a hash.
export class Migration0006Webhooks extends Migration {
  override up(): void {
    this.addSql(`
      create table webhook_endpoints (
        id uuid primary key,
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        url text not null,
        events text[] not null,
        description text not null default '',
        enabled boolean not null default true,
        secret text not null,
        last_success_at timestamptz(3),
        last_failure_at timestamptz(3),
        consecutive_failures integer not null default 0,
        created_at timestamptz(3) not null,
        updated_at timestamptz(3) not null
      )`);
    this.addSql(`create index webhook_endpoints_org_idx on webhook_endpoints (org_id, created_at)`);
  }
}
