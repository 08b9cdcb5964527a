import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { IDEMPOTENCY_WINDOW_HOURS } from '../memories/idempotency.ts';
import { deleteByCtid, sql } from '../sql.ts';

// Rows whose purpose has passed: working state nobody reads once it is done, and the records an org reads
// (audit log, webhook deliveries, exports, mail) once past their retention (docs/api-decisions.md).
const SWEEP_BATCH = 5000;
const DISPATCHED_RETENTION_DAYS = 7;
const RETENTION_DAYS = {
  // The audit log is where the plan matters: a paying org keeps 13 months, enough for a yearly review.
  auditFree: 90,
  auditPaid: 400,
  webhookDeliveries: 30,
  // An export is a download: a week to fetch it, and at most EXPORTS_KEPT of them per org in any case.
  exports: 7,
  // Reset and verification mails hold raw (by then long expired) tokens.
  mail: 14,
};
const EXPORTS_KEPT = 100;

// Each rule selects up to one batch of the table's doomed rows (by ctid).
const where = (table: string, rule: RawBuilder<unknown>) => sql`select ctid from ${sql.table(table)} where ${rule} limit ${SWEEP_BATCH}`;

const RULES: Record<string, RawBuilder<unknown>> = {
  // The replay window is over; a new request with the key starts afresh anyway.
  idempotency_keys: where('idempotency_keys', sql`created_at < now() - make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})`),
  // Sealed BYOK keys whose work never came for them.
  llm_key_escrow: where('llm_key_escrow', sql`expires_at < now()`),
  oauth_requests: where('oauth_requests', sql`expires_at < now()`),
  // Authorization codes an hour past their minute: until then a replay still finds, and revokes, what the code gave.
  oauth_codes: where('oauth_codes', sql`expires_at < now() - interval '1 hour'`),
  // Client registrations nobody authorized within a day: what a registration flood leaves.
  oauth_clients: where('oauth_clients', sql`last_used_at is null and created_at < now() - interval '1 day'`),
  // Started workflows: their job row and their events have served; kept a week for operators.
  outbox: where('outbox', sql`dispatched_at < now() - make_interval(days => ${DISPATCHED_RETENTION_DAYS})`),
  events: where('events', sql`dispatched_at < now() - make_interval(days => ${DISPATCHED_RETENTION_DAYS})`),
  // Every save writes an audit row, so this table is as large as the memories: it is walked org by org
  // through its (org_id, created_at) index, touching only the rows past retention.
  audit_events: sql`select a.ctid from orgs o cross join lateral (
      select ctid from audit_events a
       where a.org_id = o.id and a.created_at < now() - make_interval(days => case when o.plan = 'free'
         then ${RETENTION_DAYS.auditFree}::int else ${RETENTION_DAYS.auditPaid}::int end)
       limit ${SWEEP_BATCH}) a
    limit ${SWEEP_BATCH}`,
  // Deliveries still being retried stay; their attempts go with them (foreign key). Walked endpoint by
  // endpoint through the (org_id, endpoint_id, created_at) index.
  webhook_deliveries: sql`select d.ctid from webhook_endpoints w cross join lateral (
      select ctid from webhook_deliveries d
       where d.org_id = w.org_id and d.endpoint_id = w.id
         and d.created_at < now() - make_interval(days => ${RETENTION_DAYS.webhookDeliveries}) and d.status <> 'pending'
       limit ${SWEEP_BATCH}) d
    limit ${SWEEP_BATCH}`,
  // Finished exports past their week, or beyond the org's most recent EXPORTS_KEPT; chunks go with them.
  export_jobs: where(
    'export_jobs',
    sql`status <> 'pending' and (created_at < now() - make_interval(days => ${RETENTION_DAYS.exports})
      or id not in (select e.id from export_jobs e where e.org_id = export_jobs.org_id order by e.created_at desc limit ${EXPORTS_KEPT}))`,
  ),
  mail_messages: where('mail_messages', sql`created_at < now() - make_interval(days => ${RETENTION_DAYS.mail})`),
  // Write-limit windows of credentials idle for over an hour hold nothing the 60-second window needs.
  rate_limit_windows: where(
    'rate_limit_windows',
    sql`coalesce((select max(h) from unnest(hits) h), '-infinity') < now() - interval '1 hour'`,
  ),
};

export type SweepCounts = Record<string, number>;

export interface Sweep {
  counts: SweepCounts;
  // Some table filled a whole batch: there may be more.
  more: boolean;
}

// One batch per table; the caller repeats while `more`.
export async function sweepOnce(em: EntityManager): Promise<Sweep> {
  const counts: SweepCounts = {};
  for (const [table, rule] of Object.entries(RULES)) {
    counts[table] = await deleteByCtid(em, table, rule);
  }
  return { counts, more: Object.values(counts).some((n) => n >= SWEEP_BATCH) };
}
