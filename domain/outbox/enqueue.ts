import type { EntityManager } from '@mikro-orm/postgresql';
import { context, propagation } from '@opentelemetry/api';
import type { RawBuilder } from 'kysely';
import { query, sql } from '../sql.ts';
import { newId } from '../ids.ts';

// The outbox is distributed by org like the writes that fill it (docs/operations.md), and a distribution
// column holds no nulls: the jobs of no org (a password reset mail, a payment event of an unknown customer)
// are filed under the nil uuid.
export const NO_ORG = '00000000-0000-0000-0000-000000000000';

export interface JobRequest {
  orgId: string | null;
  jobType: string;
  // Derived from the business key (for example `verification-mail-<id>`): the relay runs at most one
  // job per key, so a row dispatched twice still does its work once.
  jobKey: string;
  args: unknown[];
  // What the job is for, in words an operator reads.
  description: string;
}

// The active trace context (traceparent, baggage) as text headers, or null outside any trace.
function traceCarrier(): Record<string, string> | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : null;
}

// Called inside the transaction of the write that causes the work: the work exists exactly when the write does.
export async function enqueueJobs(em: EntityManager, requests: JobRequest[]): Promise<void> {
  if (requests.length > 0) await query(em, outboxInsert(requests));
}

// The rows as one INSERT: enqueueJobs runs it, and hot write paths put it inside their single statement.
export function outboxInsert(requests: JobRequest[]): RawBuilder<unknown> {
  const trace = traceCarrier();
  return sql`insert into outbox (id, org_id, job_type, job_key, args, description, created_at, trace_context)
    select i, o, t, k, a, d, now(), ${trace === null ? null : JSON.stringify(trace)}::jsonb
    from unnest(${requests.map(() => newId())}::uuid[], ${requests.map((r) => r.orgId ?? NO_ORG)}::uuid[],
      ${requests.map((r) => r.jobType)}::text[], ${requests.map((r) => r.jobKey)}::text[],
          ${requests.map((r) => JSON.stringify(r.args))}::jsonb[],
      ${requests.map((r) => r.description)}::text[]) as r(i, o, t, k, a, d)`;
}
