import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { sweepOnce } from '../../domain/maintenance/sweep.ts';
import { ensureSchedules, maintenanceScheduleId, vectorIndexScheduleId } from '../../temporal/schedules.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ relay: false });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

const db = () => stack.orm.em.fork();
const count = async (table: string, where = sql`true`) =>
  (await query(db(), sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${where}`))[0]!.n;

async function seed(tag: string) {
  const org = a.org.id;
  await query(
    db(),
    sql`insert into idempotency_keys (org_id, key, request_hash, status, body, created_at) values
    (${org}, ${`${tag}-old`}, 'h', 201, '{}', now() - interval '25 hours'), (${org}, ${`${tag}-new`}, 'h', 201, '{}',
      now() - interval '23 hours')`,
  );
  await query(
    db(),
    sql`insert into llm_key_escrow (id, org_id, sealed, created_at, expires_at) values
    (gen_random_uuid(), ${org}, '\\x00', now() - interval '2 hours', now() - interval '1 hour'), (gen_random_uuid(), ${org},
      '\\x01', now(), now() + interval '1 hour')`,
  );
  await query(
    db(),
    sql`insert into oauth_requests (state_hash, nonce, code_verifier, created_at, expires_at) values
    (${`${tag}-old`}, 'n', 'v', now() - interval '1 hour', now() - interval '50 minutes'), (${`${tag}-new`}, 'n', 'v', now(),
      now() + interval '10 minutes')`,
  );
  await query(
    db(),
    sql`insert into outbox (id, org_id, job_type, job_key, args, description, created_at, dispatched_at) values
    (gen_random_uuid(), ${org}, 'x', ${`${tag}-done-long-ago`}, '[]', 'd', now() - interval '9 days', now() - interval '8 days'),
    (gen_random_uuid(), ${org}, 'x', ${`${tag}-done-lately`}, '[]', 'd', now() - interval '2 days', now() - interval '1 day'),
    (gen_random_uuid(), ${org}, 'x', ${`${tag}-never-dispatched`}, '[]', 'd', now() - interval '9 days', null)`,
  );
  await query(
    db(),
    sql`insert into events (org_id, type, data, created_at, dispatched_at) values
    (${org}, 'memory.saved', ${JSON.stringify({ tag })}::jsonb, now() - interval '9 days', now() - interval '8 days'),
    (${org}, 'memory.saved', ${JSON.stringify({ tag })}::jsonb, now() - interval '9 days', null)`,
  );
  await query(
    db(),
    sql`insert into rate_limit_windows (key, hits) values
    (${`${tag}-idle`}, array[now() - interval '2 hours']::timestamptz[]), (${`${tag}-busy`}, array[now() - interval '2 hours',
      now()]::timestamptz[])`,
  );
}

describe('hourly maintenance', () => {
  it('sweeps expired working state and keeps everything still in use', async () => {
    await seed('sweep');
    await ensureSchedules(stack.temporal, stack.config.TEMPORAL_TASK_QUEUE);
    await ensureSchedules(stack.temporal, stack.config.TEMPORAL_TASK_QUEUE);
    const schedule = stack.temporal.schedule.getHandle(maintenanceScheduleId(stack.config.TEMPORAL_TASK_QUEUE));
    const described = await schedule.describe();
    expect(described.spec.intervals?.[0]?.every).toBe(3_600_000);
    await schedule.trigger();
    const run = await eventually(async () => (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId);
    const total = (await stack.temporal.workflow.getHandle(run).result()) as Record<string, number>;
    expect(total).toMatchObject({ idempotency_keys: 1, llm_key_escrow: 1, oauth_requests: 1, outbox: 1, events: 1, rate_limit_windows: 1 });

    expect(await count('idempotency_keys', sql`key like 'sweep-%'`)).toBe(1);
    expect(await count('llm_key_escrow', sql`org_id = ${a.org.id}`)).toBe(1);
    expect(await count('oauth_requests', sql`state_hash like 'sweep-%'`)).toBe(1);
    const jobs = await query(db(), sql<{ job_key: string }>`select job_key from outbox where job_key like 'sweep-%' order by job_key`);
    expect(jobs.map((j) => j.job_key)).toEqual(['sweep-done-lately', 'sweep-never-dispatched']);
    expect(await count('events', sql`data->>'tag' = 'sweep'`)).toBe(1);
    expect(await count('rate_limit_windows', sql`key like 'sweep-%'`)).toBe(1);
    await schedule.delete();
    await stack.temporal.schedule.getHandle(vectorIndexScheduleId(stack.config.TEMPORAL_TASK_QUEUE)).delete();
  });

  it('enforces the retention of the records orgs read: audit log by plan, webhook deliveries, exports, mail', async () => {
    const free = await signUp(stack.api);
    const paid = await signUp(stack.api);
    await query(db(), sql`update orgs set plan = 'team' where id = ${paid.org.id}`);
    const audit = (org: string, days: number, tag: string) =>
      query(
        db(),
        sql`insert into audit_events (id, org_id, action, details, created_at)
          values (gen_random_uuid(), ${org}, ${`retention.${tag}`}, '{}', now() - make_interval(days => ${days}))`,
      );
    await audit(free.org.id, 91, 'free-old');
    await audit(free.org.id, 89, 'free-recent');
    await audit(paid.org.id, 100, 'paid-kept');
    await audit(paid.org.id, 401, 'paid-old');

    const [endpoint] = await query(
      db(),
      sql<{ id: string }>`insert into webhook_endpoints (id, org_id, url, events, secret, created_at, updated_at)
        values (gen_random_uuid(), ${free.org.id}, 'https://hooks.example.test/r', array['memory.saved'], 'whsec_r', now(), now())
        returning id`,
    );
    const delivery = async (status: string, days: number) => {
      const [d] = await query(
        db(),
        sql<{ id: string }>`insert into webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, body, status, created_at)
          values (gen_random_uuid(), ${free.org.id}, ${endpoint!.id}, 1, 'memory.saved', '{}', ${status},
            now() - make_interval(days => ${days})) returning id`,
      );
      await query(
        db(),
        sql`insert into webhook_attempts (id, org_id, delivery_id, attempt, status_code, duration_ms, created_at)
          values (gen_random_uuid(), ${free.org.id}, ${d!.id}, 1, 200, 5, now())`,
      );
      return d!.id;
    };
    const oldDone = await delivery('succeeded', 31);
    const oldPending = await delivery('pending', 31);
    const recentFailed = await delivery('failed', 29);

    const exportJob = (org: string, status: string, minutesAgo: number) =>
      query(
        db(),
        sql<{ id: string }>`insert into export_jobs (id, org_id, format, filters, status, created_at)
        values (gen_random_uuid(), ${org}, 'ndjson', '{}', ${status}, now() - make_interval(mins => ${minutesAgo})) returning id`,
      ).then((r) => r[0]!.id);
    const weekOld = await exportJob(free.org.id, 'completed', 8 * 24 * 60);
    const weekOldPending = await exportJob(free.org.id, 'pending', 8 * 24 * 60);
    const many: string[] = [];
    for (let i = 0; i < 102; i++) many.push(await exportJob(paid.org.id, 'completed', 102 - i));
    await query(
      db(),
      sql`insert into mail_messages (id, kind, dedupe_key, to_address, subject, text_body, transport, created_at) values
      (gen_random_uuid(), 'reset', 'retention-old', 'x@example.test', 's', 't', 'log', now() - interval '15 days'),
      (gen_random_uuid(), 'reset', 'retention-new', 'x@example.test', 's', 't', 'log', now() - interval '13 days')`,
    );

    for (let more = true; more;) more = (await sweepOnce(db())).more;

    const actions = await query(
      db(),
      sql<{ action: string }>`select action from audit_events where action like 'retention.%' order by action`,
    );
    expect(actions.map((r) => r.action)).toEqual(['retention.free-recent', 'retention.paid-kept']);
    const deliveries = await query(db(), sql<{ id: string }>`select id from webhook_deliveries where endpoint_id = ${endpoint!.id}`);
    expect(deliveries.map((d) => d.id).sort()).toEqual([oldPending, recentFailed].sort());
    expect(await count('webhook_attempts', sql`delivery_id = ${oldDone}`)).toBe(0);
    const exports = new Set(
      (await query(db(), sql<{ id: string }>`select id from export_jobs where org_id in (${free.org.id}, ${paid.org.id})`)).map(
        (r) => r.id,
      ),
    );
    expect(exports.has(weekOld)).toBe(false);
    expect(exports.has(weekOldPending)).toBe(true);
    expect(many.filter((id) => exports.has(id))).toEqual(many.slice(2));
    expect(await count('mail_messages', sql`dedupe_key like 'retention-%'`)).toBe(1);
  });
});
