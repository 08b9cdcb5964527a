import { Migration } from '@mikro-orm/migrations';

// A webhook endpoint's signing secret is kept sealed (AES-256-GCM under the escrow key, domain/sealing.ts), so a
// copy of the database alone cannot forge deliveries. The plain column stays, nullable, for the secrets written
// before: the worker's maintenance seals them and clears it (domain/webhooks/secrets.ts).
export class Migration0029SealedWebhookSecrets extends Migration {
  override up(): void {
    this.addSql(`alter table webhook_endpoints add column secret_sealed bytea`);
    this.addSql(`alter table webhook_endpoints alter column secret drop not null`);
    this.addSql(
      `alter table webhook_endpoints add constraint webhook_endpoints_secret_kept check (secret is not null or secret_sealed is not null)`,
    );
  }
}
