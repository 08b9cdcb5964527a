import { Migration } from '@mikro-orm/migrations';

// Single-use password reset tokens; only their hash is stored.
export class Migration0004PasswordResets extends Migration {
  override up(): void {
    this.addSql(`
      create table password_resets (
        id uuid primary key,
        user_id uuid not null references users (id) on delete cascade deferrable initially deferred,
        token_hash text not null,
        created_at timestamptz(3) not null,
        expires_at timestamptz(3) not null,
        used_at timestamptz(3),
        constraint password_resets_token_hash_unique unique (token_hash)
      )`);
    this.addSql(`create index password_resets_user_idx on password_resets (user_id)`);
  }
}
