import { Migration } from '@mikro-orm/migrations';

// Extraction from conversations (domain/extraction): one row per POST /api/conversations with infer, naming the
// messages it reads, followed by the org's curator (queued, then processed with its decisions, failed or skipped
// with a reason), and each org's model tokens per month, which extraction is metered and capped by.
export class Migration0028ConversationExtractions extends Migration {
  override up(): void {
    this.addSql(`
      create table conversation_extractions (
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        id uuid not null,
        conversation_id text not null,
        message_ids uuid[] not null,
        status text not null default 'queued' check (status in ('queued', 'processed', 'failed', 'skipped')),
        reason text,
        decisions jsonb not null default '[]',
        tokens_in integer not null default 0,
        tokens_out integer not null default 0,
        caller jsonb not null,
        created_at timestamptz(3) not null default now(),
        processed_at timestamptz(3),
        constraint conversation_extractions_pk primary key (org_id, id)
      )`);
    this.addSql(
      `create index conversation_extractions_conversation_idx on conversation_extractions (org_id, conversation_id, created_at desc)`,
    );
    this.addSql(
      `create index conversation_extractions_trigger_idx on conversation_extractions (org_id, (message_ids[array_upper(message_ids, 1)]))`,
    );
    this.addSql(`
      create table llm_usage (
        org_id uuid not null references orgs (id) on delete cascade deferrable initially deferred,
        month date not null,
        tokens_in bigint not null default 0,
        tokens_out bigint not null default 0,
        constraint llm_usage_pk primary key (org_id, month)
      )`);
  }
}
