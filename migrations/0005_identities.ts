import { Migration } from '@mikro-orm/migrations';

// Sign-in through the external identity provider: pending authorization requests and linked identities.
export class Migration0005Identities extends Migration {
  override up(): void {
    this.addSql(`
      create table oauth_requests (
        state_hash text primary key,
        nonce text not null,
        code_verifier text not null,
        created_at timestamptz(3) not null,
        expires_at timestamptz(3) not null
      )`);
    this.addSql(`
      create table user_identities (
        issuer text not null,
        subject text not null,
        user_id uuid not null references users (id) on delete cascade deferrable initially deferred,
        created_at timestamptz(3) not null,
        constraint user_identities_pk primary key (issuer, subject)
      )`);
    this.addSql(`create index user_identities_user_idx on user_identities (user_id)`);
  }
}
