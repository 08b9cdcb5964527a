import { Migration } from '@mikro-orm/migrations';

// One delivery per (event, subscribed endpoint), its attempts, and a wake-up for the dispatcher.
export class Migration0007WebhookDeliveries extends Migration {
  override up(): void {
    this.addSql(`
      create table webhook_deliveries (
        id uuid primary key,
        org_id uuid not null,
        endpoint_id uuid not null references webhook_endpoints (id) on delete cascade deferrable initially deferred,
        event_id bigint not null,
        event_type text not null,
        body text not null,
        status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed', 'cancelled')),
        attempt_count integer not null default 0,
        created_at timestamptz(3) not null,
        completed_at timestamptz(3)
      )`);
    this.addSql(`create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, created_at desc)`);
    this.addSql(`
      create table webhook_attempts (
        id uuid primary key,
        delivery_id uuid not null references webhook_deliveries (id) on delete cascade deferrable initially deferred,
        attempt integer not null,
        status_code integer,
        error text,
        duration_ms integer not null,
        created_at timestamptz(3) not null
      )`);
    this.addSql(`create index webhook_attempts_delivery_idx on webhook_attempts (delivery_id, attempt)`);
    // Wakes the relay once per statement that adds events (a save batch adds many).
    this.addSql(`
      create function outbox_notify_statement() returns trigger language plpgsql as $$
      begin
        perform pg_notify('outbox', 'events');
        return null;
      end $$`);
    this.addSql(`create trigger events_notify after insert on events for each statement execute function outbox_notify_statement()`);
  }
}
