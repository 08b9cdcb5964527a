import { Migration } from '@mikro-orm/migrations';

// Memory intelligence (issue 6): entity aliases for merging by alias, superseded memories, runbooks, chat
// sessions, consolidation proposals, and the short-lived escrow of callers' own LLM keys for background work.
export class Migration0010Intelligence extends Migration {
  override up(): void {
    // Extraction merges a mention into an entity whose normalized name or normalized alias matches it.
    this.addSql(`alter table entities add column normalized_aliases text[] not null default '{}'`);
    this.addSql(`create index entities_aliases_idx on entities using gin (normalized_aliases)`);
    this.addSql(`create index entities_org_seen_idx on entities (org_id, last_seen_at desc, id)`);
    this.addSql(
      `alter table memory_entities add constraint memory_entities_org_fk foreign key (org_id) references orgs (id) on delete cascade deferrable initially deferred`,
    );
    this.addSql(`create index memory_entities_org_idx on memory_entities (org_id, entity_id)`);

    // A consolidation merge supersedes both originals: they leave search and the default lists but stay
    // readable by id. Null for almost every row, so no index beyond the list indexes.
    this.addSql(`alter table memories add column superseded_by uuid`);

    this.addSql(`
      create table runbooks (
        id uuid primary key,
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        title text not null,
        summary text not null default '',
        trigger_phrases text[] not null default '{}',
        steps jsonb not null default '[]',
        metadata jsonb not null default '{}',
        success_count integer not null default 0,
        failure_count integer not null default 0,
        created_at timestamptz(3) not null,
        updated_at timestamptz(3) not null,
        last_used_at timestamptz(3)
      )`);
    // Titles are unique per org regardless of case: "Deploy" and "deploy" are the same runbook to a reader.
    this.addSql(`create unique index runbooks_org_title_unique on runbooks (org_id, lower(title))`);
    this.addSql(`create index runbooks_triggers_idx on runbooks using gin (trigger_phrases)`);

    this.addSql(`
      create table chat_sessions (
        id uuid primary key,
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        user_id uuid not null references users (id) on delete cascade deferrable initially deferred,
        title text not null,
        metadata jsonb not null default '{}',
        created_at timestamptz(3) not null,
        updated_at timestamptz(3) not null
      )`);
    this.addSql(`create index chat_sessions_owner_idx on chat_sessions (org_id, user_id, updated_at desc, id)`);
    this.addSql(`
      create table chat_messages (
        id bigint generated always as identity primary key,
        session_id uuid not null references chat_sessions (id) on delete cascade deferrable initially deferred,
        role text not null check (role in ('user', 'assistant', 'system')),
        content text not null,
        citations jsonb not null default '[]',
        created_at timestamptz(3) not null
      )`);
    this.addSql(`create index chat_messages_session_idx on chat_messages (session_id, id)`);

    this.addSql(`
      create table consolidation_proposals (
        id uuid primary key,
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        namespace_id uuid not null,
        kind text not null check (kind in ('duplicate', 'contradiction', 'stale')),
        memory_a_id uuid not null references memories (id) on delete cascade deferrable initially deferred,
        memory_b_id uuid not null references memories (id) on delete cascade deferrable initially deferred,
        score double precision not null,
        status text not null default 'pending' check (status in ('pending', 'approved', 'rejected', 'merged')),
        note text,
        proposed_at timestamptz(3) not null,
        reviewed_at timestamptz(3),
        reviewed_by uuid,
        merged_memory_id uuid,
        -- While an approved proposal's merge runs, and how its last attempt failed: what the dashboard polls.
        merge_state text check (merge_state in ('running', 'failed')),
        merge_attempts integer not null default 0,
        merge_error text,
        -- One proposal per unordered pair: a pair seen again is "already known", whatever its kind.
        constraint consolidation_pair_order check (memory_a_id < memory_b_id),
        constraint consolidation_pair_unique unique (org_id, memory_a_id, memory_b_id)
      )`);
    this.addSql(`create index consolidation_org_status_idx on consolidation_proposals (org_id, status, proposed_at desc, id)`);
    this.addSql(`create index consolidation_memory_b_idx on consolidation_proposals (memory_b_id)`);

    // A caller's own LLM key, sealed with the server's key, for the background work its request started.
    // Deleted by that work when it ends; expired rows are swept.
    this.addSql(`
      create table llm_key_escrow (
        id uuid primary key,
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        sealed bytea not null,
        created_at timestamptz(3) not null,
        expires_at timestamptz(3) not null
      )`);
    this.addSql(`create index llm_key_escrow_expiry_idx on llm_key_escrow (expires_at)`);
  }
}
