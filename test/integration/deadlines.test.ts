import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { migrate, openOrm } from '../../infra/orm.ts';
import { PrivatePostgres } from '../support/private-postgres.ts';
import { freePort } from '../support/ports.ts';
import { eventually, signUp, startStack, type Stack } from '../support/stack.ts';

// Nothing a request waits on waits forever: a free database connection, a statement, a workflow's result, Temporal.
const stacks: Stack[] = [];
const started = async (...args: Parameters<typeof startStack>): Promise<Stack> => {
  const stack = await startStack(...args);
  stacks.push(stack);
  return stack;
};
afterAll(async () => Promise.all(stacks.map((s) => s.close())));

const setPlan = (stack: Stack, orgId: string, plan: string) =>
  query(stack.orm.em.fork(), sql`update orgs set plan = ${plan} where id = ${orgId}`);

describe('database deadlines', () => {
  it('start every pooled connection with its statement and idle-transaction deadlines', async () => {
    const stack = await started({
      relay: false,
      worker: false,
      env: { DATABASE_STATEMENT_TIMEOUT_MS: '7000', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '9000' },
    });
    const [row] = await query(
      stack.orm.em.fork(),
      sql<{
        statement: string;
        idle: string;
      }>`select current_setting('statement_timeout') as statement, current_setting('idle_in_transaction_session_timeout') as idle`,
    );
    expect(row).toEqual({ statement: '7s', idle: '9s' });
  });

  it('answer 503 database_busy with Retry-After when no connection frees up in time', async () => {
    const stack = await started({ relay: false, worker: false, env: { DATABASE_POOL_MAX: '1', DATABASE_ACQUIRE_TIMEOUT_MS: '300' } });
    const a = await signUp(stack.api);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holder = stack.orm.em
      .getKysely()
      .connection()
      .execute(async () => {
        held();
        await gate;
      });
    await holding;
    try {
      const res = await stack.api.get('/api/memories', { token: a.token });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ error: 'database_busy', message: expect.any(String) });
      expect(res.headers.get('retry-after')).toBe('2');
    } finally {
      release();
      await holder;
    }
    expect((await stack.api.get('/api/memories', { token: a.token })).status).toBe(200);
  });

  it('answer 503 database_timeout when a statement runs past its deadline, and free the connection', async () => {
    const stack = await started({ relay: false, worker: false, env: { DATABASE_STATEMENT_TIMEOUT_MS: '300' } });
    const a = await signUp(stack.api);
    const locker = new pg.Client({ connectionString: stack.config.DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table memories in access exclusive mode');
      const res = await stack.api.get('/api/memories', { token: a.token });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('database_timeout');
      expect(res.headers.get('retry-after')).toBe('2');
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    expect((await stack.api.get('/api/memories', { token: a.token })).status).toBe(200);
  });

  it('answer 503 database_unavailable while PostgreSQL is down, and serve again once it is back', async () => {
    const server = await PrivatePostgres.start();
    try {
      const orm = await openOrm({ databaseUrl: server.url, poolMax: 1 });
      await migrate(orm);
      await orm.close();
      const stack = await started({ databaseUrl: server.url, relay: false, worker: false });
      const a = await signUp(stack.api);
      await server.down();
      const res = await stack.api.get('/api/memories', { token: a.token });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('database_unavailable');
      expect(res.headers.get('retry-after')).toBe('2');
      const save = await stack.api.post('/api/memories', { token: a.token, body: { content: 'saved while the database is down' } });
      expect(save.status).toBe(503);
      await server.up();
      expect((await stack.api.get('/api/memories', { token: a.token })).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('waiting on workflows', () => {
  it('answers a detect that outlasts WORKFLOW_WAIT_MS with 503 still_running; asking again joins the same run', async () => {
    const stack = await started({ relay: false, worker: false, env: { WORKFLOW_WAIT_MS: '500' } });
    const a = await signUp(stack.api);
    await setPlan(stack, a.org.id, 'team');
    const detect = () => stack.api.post('/api/consolidate', { token: a.token, body: { action: 'detect' } });
    // No worker yet: the run starts and waits for one.
    const first = await detect();
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({ error: 'still_running', message: expect.stringContaining(`consolidation-detect-${a.org.id}`) });
    expect(first.headers.get('retry-after')).toBe('5');
    stack.worker = await stack.startWorker();
    // Each request waits half a second more; the run the first one started answers once the worker has taken it.
    const again = await eventually(async () => {
      const res = await detect();
      if (res.status === 503) expect(res.body.error).toBe('still_running');
      return res.status === 200 && res;
    });
    expect(again.body).toEqual({ scanned: 0, proposalsCreated: 0, alreadyKnown: 0 });
    // The run the first request started while no worker ran was not abandoned: it ran to its end. (A request after
    // a run has ended may start the next one: a detect is repeatable.)
    const workflowId = `consolidation-detect-${a.org.id}-*-0.8`;
    const runs = await eventually(async () => {
      const listed: { start: number; runId: string }[] = [];
      for await (const run of stack.temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` }))
        listed.push({ start: run.startTime.getTime(), runId: run.runId });
      return listed.length > 0 && listed;
    });
    const earliest = runs.sort((x, y) => x.start - y.start)[0]!;
    expect(await stack.temporal.workflow.getHandle(workflowId, earliest.runId).result()).toMatchObject({ scanned: 0, proposalsCreated: 0 });
  });

  it('signs up without Temporal, and answers 503 temporal_unavailable where a request must reach it', async () => {
    const closed = await freePort();
    const stack = await started({
      relay: false,
      worker: false,
      env: { TEMPORAL_ADDRESS: `127.0.0.1:${closed}`, WORKFLOW_WAIT_MS: '1000' },
    });
    const a = await signUp(stack.api);
    const outbox = await query(stack.orm.em.fork(), sql<{ job_key: string }>`select job_key from outbox where org_id = ${a.org.id}`);
    expect(outbox.map((r) => r.job_key)).toEqual([`verification-mail-signup-${a.org.id}`]);
    await setPlan(stack, a.org.id, 'team');
    const detect = await stack.api.post('/api/consolidate', { token: a.token, body: { action: 'detect' } });
    expect(detect.status).toBe(503);
    expect(detect.body.error).toBe('temporal_unavailable');
    expect(detect.headers.get('retry-after')).toBe('5');
  });
});
