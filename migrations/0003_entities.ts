import { Migration } from '@mikro-orm/migrations';

// Canonical entities of an org and their links to memories. The list routes filter by them now; entity
// extraction fills them (issue 6).
export class Migration0003Entities extends Migration {
  override up(): void {
    this.addSql(`
      create table entities (
        id uuid primary key,
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        display_name text not null,
        normalized_name text not null,
        entity_type text not null,
        aliases text[] not null default '{}',
        metadata jsonb not null default '{}',
        mention_count integer not null default 0,
        first_seen_at timestamptz(3) not null,
        last_seen_at timestamptz(3) not null,
        created_at timestamptz(3) not null,
        updated_at timestamptz(3) not null,
        constraint entities_org_name_unique unique (org_id, normalized_name)
      )`);
    this.addSql(`
      create table memory_entities (
        entity_id uuid not null references entities (id) on delete cascade deferrable initially deferred,
        memory_id uuid not null references memories (id) on delete cascade deferrable initially deferred,
        org_id uuid not null,
        linked_via text not null,
        created_at timestamptz(3) not null,
        constraint memory_entities_pk primary key (entity_id, memory_id)
      )`);
    this.addSql(`create index memory_entities_memory_idx on memory_entities (memory_id)`);
  }
}
