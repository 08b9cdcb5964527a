import { Migration } from '@mikro-orm/migrations';

// Accounts, credentials, audit log, outbox, mail and the shared write-rate window.
// Foreign keys are checked at commit (deferred): entities carry plain id columns, so the unit of work
// does not know which insert must go first, and only the committed state has to be consistent.
// Timestamps keep milliseconds, the API's precision, so an inclusive filter on a returned value matches it.
export class Migration0001Foundation extends Migration {
  override up(): void {
    this.addSql(`
      create table users (
        id uuid primary key,
        email text not null,
        name text not null,
        password_hash text,
        email_verified_at timestamptz(3),
        last_login_at timestamptz(3),
        last_org_id uuid,
        created_at timestamptz(3) not null,
        updated_at timestamptz(3) not null,
        constraint users_email_unique unique (email),
        constraint users_email_lower check (email = lower(email))
      )`);
    this.addSql(`
      create table orgs (
        id uuid primary key,
        slug text not null,
        name text not null,
        plan text not null default 'free' check (plan in ('free', 'personal', 'team', 'enterprise')),
        created_at timestamptz(3) not null,
        updated_at timestamptz(3) not null,
        constraint orgs_slug_unique unique (slug),
        constraint orgs_slug_format check (slug ~ '^[a-z0-9-]{1,80}$'),
        constraint orgs_name_length check (char_length(name) between 1 and 200)
      )`);
    this.addSql(
      `alter table users add constraint users_last_org_fk foreign key (last_org_id) references orgs (id) on delete set null deferrable initially deferred`,
    );
    this.addSql(`
      create table memberships (
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        user_id uuid not null references users (id) on delete cascade deferrable initially deferred,
        role text not null check (role in ('owner', 'admin', 'member')),
        created_at timestamptz(3) not null,
        primary key (org_id, user_id)
      )`);
    this.addSql(`create index memberships_user_idx on memberships (user_id)`);
    this.addSql(`
      create table credentials (
        id uuid primary key,
        kind text not null check (kind in ('api', 'session')),
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        user_id uuid not null references users (id) on delete cascade deferrable initially deferred,
        name text,
        prefix text not null,
        secret_hash text not null,
        created_at timestamptz(3) not null,
        last_used_at timestamptz(3),
        expires_at timestamptz(3),
        revoked_at timestamptz(3),
        constraint credentials_secret_hash_unique unique (secret_hash)
      )`);
    // Every request resolves its credential with this; as a PL/pgSQL function its plan is prepared once
    // per connection instead of on every call (the three-way join costs more to plan than to run).
    this.addSql(`
      create function credential_lookup(p_hash text, p_kind text)
      returns table (id uuid, user_id uuid, org_id uuid, role text, plan text, stale boolean) language plpgsql stable as $$
      begin
        return query
          select c.id, c.user_id, c.org_id, m.role, o.plan,
                 (c.last_used_at is null or c.last_used_at < now() - interval '60 seconds')
            from credentials c
            join memberships m on m.org_id = c.org_id and m.user_id = c.user_id
            join orgs o on o.id = c.org_id
           where c.secret_hash = p_hash and c.kind = p_kind and c.revoked_at is null
             and (c.expires_at is null or c.expires_at > now());
      end $$`);
    this.addSql(`create index credentials_listing_idx on credentials (org_id, user_id, kind, created_at desc) where revoked_at is null`);
    this.addSql(`
      create table email_verifications (
        id uuid primary key,
        user_id uuid not null references users (id) on delete cascade deferrable initially deferred,
        email text not null,
        token_hash text not null,
        created_at timestamptz(3) not null,
        expires_at timestamptz(3) not null,
        used_at timestamptz(3),
        constraint email_verifications_token_hash_unique unique (token_hash)
      )`);
    this.addSql(`create index email_verifications_user_idx on email_verifications (user_id)`);
    // The audit log outlives the users it names, so actor columns carry no foreign key; nor does org_id,
    // since every write adds a row here and a foreign key would lock the org's row at each commit.
    this.addSql(`
      create table audit_events (
        id uuid primary key,
        org_id uuid not null,
        action text not null,
        target_id text,
        actor_user_id uuid,
        actor_token uuid,
        details jsonb not null default '{}',
        created_at timestamptz(3) not null
      )`);
    this.addSql(`create index audit_events_org_time_idx on audit_events (org_id, created_at desc, id desc)`);
    this.addSql(`create index audit_events_org_action_idx on audit_events (org_id, action text_pattern_ops, created_at desc)`);
    this.addSql(`create index audit_events_org_target_idx on audit_events (org_id, target_id, created_at desc)`);
    this.addSql(`create index audit_events_org_actor_idx on audit_events (org_id, actor_user_id, created_at desc)`);
    this.addSql(`
      create table outbox (
        id uuid primary key,
        org_id uuid,
        job_type text not null,
        job_key text not null,
        args jsonb not null,
        description text not null,
        created_at timestamptz(3) not null,
        dispatched_at timestamptz(3),
        attempts integer not null default 0,
        last_error text,
        constraint outbox_job_key_unique unique (job_key)
      )`);
    this.addSql(`create index outbox_pending_idx on outbox (created_at) where dispatched_at is null`);
    // Wakes the relay as soon as a row commits; polling remains the safety net.
    this.addSql(`
      create function outbox_notify() returns trigger language plpgsql as $$
      begin
        perform pg_notify('outbox', new.id::text);
        return null;
      end $$`);
    this.addSql(`create trigger outbox_notify after insert on outbox for each row execute function outbox_notify()`);
    this.addSql(`
      create table mail_messages (
        id uuid primary key,
        kind text not null,
        dedupe_key text not null,
        to_address text not null,
        subject text not null,
        text_body text not null,
        transport text not null check (transport in ('log', 'smtp')),
        provider_message_id text,
        created_at timestamptz(3) not null,
        sent_at timestamptz(3),
        constraint mail_messages_dedupe_key_unique unique (dedupe_key)
      )`);
    // Rolling-window write limit shared by every API process: one row per credential holding the
    // times of its recent writes. The upsert's row lock serialises concurrent writers of one key.
    this.addSql(`
      create table rate_limit_windows (
        key text primary key,
        hits timestamptz[] not null
      )`);
    this.addSql(`
      create function rate_limit_take(p_key text, p_limit integer, p_window interval)
      returns table (allowed boolean, retry_after_ms bigint) language plpgsql as $$
      declare
        v_now timestamptz(3) := clock_timestamp();
        v_recent timestamptz[];
      begin
        insert into rate_limit_windows as w (key, hits) values (p_key, '{}')
        on conflict (key) do update set key = w.key
        returning array(select h from unnest(w.hits) h where h > v_now - p_window order by h) into v_recent;
        if coalesce(array_length(v_recent, 1), 0) < p_limit then
          update rate_limit_windows set hits = v_recent || v_now where key = p_key;
          return query select true, 0::bigint;
        else
          update rate_limit_windows set hits = v_recent where key = p_key;
          return query select false,
            greatest(1, ceil(extract(epoch from (v_recent[array_length(v_recent, 1) - p_limit + 1] + p_window - v_now)) * 1000))::bigint;
        end if;
      end $$`);
  }
}
