import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database.ts';
import { spawnService, type ServiceProcess } from '../support/service-process.ts';
import { eventually } from '../support/stack.ts';

// The worker killed (SIGKILL) while its org's fold is in flight: the attempt dies with it and nobody reports it
// failed. The fold's heartbeat timeout lets Temporal retry it on the next worker, so the org's fold loop goes on.
let env: Record<string, string>;
let db: pg.Client;
let holder: pg.Client;
const processes: ServiceProcess[] = [];
beforeAll(async () => {
  env = { DATABASE_URL: await createTestDatabase(), TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`, LOG_LEVEL: 'warn' };
  db = new pg.Client({ connectionString: env.DATABASE_URL });
  holder = new pg.Client({ connectionString: env.DATABASE_URL });
  await Promise.all([db.connect(), holder.connect()]);
  processes.push(...(await Promise.all([spawnService('api', env), spawnService('worker', env)])));
}, 120_000);
afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill()));
  await Promise.all([db?.end(), holder?.end()]);
});

const post = async (path: string, body: unknown, token?: string) => {
  const res = await fetch(`${processes[0]!.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const staged = async (orgId: string) =>
  (await db.query<{ n: number }>('select count(*)::int as n from lexical_staged where org_id = $1', [orgId])).rows[0]!.n;
// Backends waiting for a lock on the org's fold state: the fold, held at its first step.
const foldsWaiting = async () =>
  (
    await db.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%lexical_state%'`,
    )
  ).rows[0]!.n;

describe('the worker killed in the middle of a fold', () => {
  it('the fold is tried again on the next worker and every staged memory is folded', async () => {
    const signup = await post('/api/auth/signup', {
      email: `fold-${randomUUID()}@example.com`,
      password: 'correct horse battery',
      name: 'Ada',
      org_name: 'Fold',
    });
    expect(signup.status).toBe(201);
    const orgId: string = signup.body.org.id;
    // The org's one-folder lock, held here: the next fold starts and waits on it.
    await holder.query('begin');
    await holder.query('insert into lexical_state (org_id) values ($1) on conflict do nothing', [orgId]);
    await holder.query('select next_docnum from lexical_state where org_id = $1 for update', [orgId]);
    expect((await post('/api/memories', { content: 'a memory staged while its fold is held' }, signup.body.api_token.raw)).status).toBe(201);
    await eventually(async () => (await foldsWaiting()) > 0, 30_000);

    await processes[1]!.kill();
    processes.push(await spawnService('worker', env));
    await holder.query('rollback');
    expect(await staged(orgId)).toBe(1);
    await eventually(async () => (await staged(orgId)) === 0, 75_000);
  }, 180_000);
});
