import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { ensureMaintenanceSchedule, maintenanceScheduleId } from '../../temporal/schedules.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  stack = await startStack({ relay: false });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

const db = () => stack.orm.em.fork();
const count = async (table: string, where = sql`true`) => (await query(db(), sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${where}`))[0]!.n;

async function seed(tag: string) {
  const org = a.org.id;
  await query(db(), sql`insert into idempotency_keys (org_id, key, request_hash, status, body, created_at) values
    (${org}, ${`${tag}-old`}, 'h', 201, '{}', now() - interval '25 hours'), (${org}, ${`${tag}-new`}, 'h', 201, '{}', now() - interval '23 hours')`);
  await query(db(), sql`insert into llm_key_escrow (id, org_id, sealed, created_at, expires_at) values
    (gen_random_uuid(), ${org}, '\\x00', now() - interval '2 hours', now() - interval '1 hour'), (gen_random_uuid(), ${org}, '\\x01', now(), now() + interval '1 hour')`);
  await query(db(), sql`insert into oauth_requests (state_hash, nonce, code_verifier, created_at, expires_at) values
    (${`${tag}-old`}, 'n', 'v', now() - interval '1 hour', now() - interval '50 minutes'), (${`${tag}-new`}, 'n', 'v', now(), now() + interval '10 minutes')`);
  await query(db(), sql`insert into outbox (id, org_id, job_type, job_key, args, description, created_at, dispatched_at) values
    (gen_random_uuid(), ${org}, 'x', ${`${tag}-done-long-ago`}, '[]', 'd', now() - interval '9 days', now() - interval '8 days'),
    (gen_random_uuid(), ${org}, 'x', ${`${tag}-done-lately`}, '[]', 'd', now() - interval '2 days', now() - interval '1 day'),
    (gen_random_uuid(), ${org}, 'x', ${`${tag}-never-dispatched`}, '[]', 'd', now() - interval '9 days', null)`);
  await query(db(), sql`insert into events (org_id, type, data, created_at, dispatched_at) values
    (${org}, 'memory.saved', ${JSON.stringify({ tag })}::jsonb, now() - interval '9 days', now() - interval '8 days'),
    (${org}, 'memory.saved', ${JSON.stringify({ tag })}::jsonb, now() - interval '9 days', null)`);
  await query(db(), sql`insert into rate_limit_windows (key, hits) values
    (${`${tag}-idle`}, array[now() - interval '2 hours']::timestamptz[]), (${`${tag}-busy`}, array[now() - interval '2 hours', now()]::timestamptz[])`);
}

describe('hourly maintenance', () => {
  it('sweeps expired working state and keeps everything still in use', async () => {
    await seed('sweep');
    await ensureMaintenanceSchedule(stack.temporal, stack.config.TEMPORAL_TASK_QUEUE);
    await ensureMaintenanceSchedule(stack.temporal, stack.config.TEMPORAL_TASK_QUEUE);
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
  });
});
