import { Migration } from '@mikro-orm/migrations';

// The service as its own OAuth authorization server (MCP authorization, docs/api-decisions.md "Connecting with
// OAuth"): clients registered dynamically, one-time authorization codes, and the grants that tie a client's
// refresh token to the API token it holds, so revoking that token on the tokens page ends both.
export class Migration0031OauthServer extends Migration {
  override up(): void {
    this.addSql(`
      create table oauth_clients (
        id uuid primary key,
        name text not null,
        redirect_uris text[] not null,
        created_at timestamptz(3) not null,
        last_used_at timestamptz(3)
      )`);
    // Registrations nobody ever authorized are swept after a day (domain/maintenance/sweep.ts).
    this.addSql(`create index oauth_clients_unused_idx on oauth_clients (created_at) where last_used_at is null`);
    this.addSql(`
      create table oauth_codes (
        code_hash text primary key,
        client_id uuid not null references oauth_clients (id) on delete cascade,
        user_id uuid not null references users (id) on delete cascade,
        org_id uuid not null references orgs (id) on delete cascade,
        redirect_uri text not null,
        code_challenge text not null,
        resource text,
        scope text not null,
        created_at timestamptz(3) not null,
        expires_at timestamptz(3) not null,
        used_at timestamptz(3),
        credential_id uuid references credentials (id) on delete set null
      )`);
    this.addSql(`create index oauth_codes_expires_idx on oauth_codes (expires_at)`);
    this.addSql(`
      create table oauth_grants (
        credential_id uuid primary key references credentials (id) on delete cascade,
        client_id uuid not null references oauth_clients (id) on delete cascade,
        refresh_hash text not null,
        previous_refresh_hash text,
        refresh_expires_at timestamptz(3) not null,
        scope text not null,
        resource text,
        constraint oauth_grants_refresh_hash_unique unique (refresh_hash)
      )`);
    this.addSql(`create index oauth_grants_previous_refresh_idx on oauth_grants (previous_refresh_hash)`);
    this.addSql(`create index oauth_grants_client_idx on oauth_grants (client_id)`);
  }
}
