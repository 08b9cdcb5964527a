import { Migration } from '@mikro-orm/migrations';

// The payment processor's view of an org, and every processor event received, once per event id.
export class Migration0009Billing extends Migration {
  override up(): void {
    this.addSql(
      `alter table orgs add column stripe_customer_id text, add column stripe_subscription_id text, add column billing_status text`,
    );
    this.addSql(`create index orgs_stripe_customer_idx on orgs (stripe_customer_id) where stripe_customer_id is not null`);
    this.addSql(`
      create table billing_events (
        id text primary key,
        type text not null,
        org_id uuid,
        payload jsonb not null,
        received_at timestamptz(3) not null,
        processed_at timestamptz(3),
        outcome text
      )`);
  }
}
