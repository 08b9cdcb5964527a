import type { MikroORM } from '@mikro-orm/postgresql';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { freePort } from '../support/ports.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordedMails } from '../support/mail.ts';
import { NO_ORG } from '../../domain/outbox/enqueue.ts';
import { query, sql } from '../../domain/sql.ts';
import type { RawBuilder } from 'kysely';
import { VERIFICATION_MAIL_JOB } from '../../domain/accounts/verification.ts';
import { CURATE_JOB } from '../../domain/store/curate.ts';
import { migrate, openOrm } from '../../infra/orm.ts';
import { JOB_WORKFLOWS } from '../../temporal/jobs.ts';
import { MAX_ATTEMPTS } from '../../temporal/outbox-relay.ts';
import { ORG_ID } from '../../temporal/search-attributes.ts';
import { startOnce } from '../../temporal/start.ts';
import { eventually, newRelay, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';
import { postFrom } from '../support/from-address.ts';
import { PrivatePostgres } from '../support/private-postgres.ts';

const { temporal } = proto;

// The relay is not started with the stack: each test decides when dispatch happens.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false });
});
afterAll(async () => stack?.close());

// Polling every 100 ms, so that tests waiting on the poll finish quickly.
const quickRelay = () => newRelay(stack, { pollIntervalMs: 100 });

// Each resend from an address of its own: mail requests are throttled per client address.
let resends = 0;
interface OutboxRow {
  id: string;
  orgId: string;
  jobType: string;
  jobKey: string;
  description: string;
  args: unknown[];
  attempts: number;
  createdAt: string;
  dispatchedAt: string | null;
}

const outboxRows = (where: RawBuilder<unknown>) =>
  query(
    stack.orm.em.fork(),
    sql<OutboxRow>`select id, org_id as "orgId", job_type as "jobType", job_key as "jobKey", description, args, attempts,
      created_at as "createdAt", dispatched_at as "dispatchedAt" from outbox where ${where}`,
  );

// The row once the relay has dispatched it.
const dispatched = async (row: OutboxRow) => (await outboxRows(sql`id = ${row.id} and dispatched_at is not null`))[0];

async function queuedResend(account: SignedUp): Promise<OutboxRow> {
  const before = await outboxRows(sql`org_id = ${account.org.id}`);
  const from = `127.0.1.${++resends}`;
  expect(
    (await postFrom(from, new URL('/api/auth/resend-verification', stack.baseUrl).href, {}, { authorization: `Bearer ${account.token}` }))
      .status,
  ).toBe(202);
  const rows = await outboxRows(sql`org_id = ${account.org.id}`);
  const row = rows.find((r) => !before.some((b) => b.id === r.id));
  expect(row).toBeDefined();
  return row!;
}

const mailsFor = async (row: OutboxRow) =>
  (await recordedMails(stack.orm.em.fork(), { dedupeKey: `verification:${row.jobKey.replace('verification-mail-', '')}` })).length;

async function executionsOf(workflowId: string): Promise<number> {
  let n = 0;
  for await (const _ of stack.temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` })) n++;
  return n;
}

describe('outbox relay', () => {
  it('commits the job with the write; nothing runs until a relay dispatches it', async () => {
    const a = await signUp(stack.api);
    const row = await queuedResend(a);
    expect(row.dispatchedAt).toBeNull();
    expect(row.jobKey).toMatch(/^verification-mail-[0-9a-f-]{36}$/);
    expect(await executionsOf(row.jobKey)).toBe(0);
    expect(await mailsFor(row)).toBe(0);

    const relay = quickRelay();
    await relay.start();
    try {
      await eventually(async () => (await mailsFor(row)) === 1);
      expect((await eventually(() => dispatched(row))).attempts).toBe(1);
    } finally {
      await relay.stop();
    }
    const description = await stack.temporal.workflow.getHandle(row.jobKey).describe();
    expect(description.type).toBe('verificationMailWorkflow');
    expect(description.typedSearchAttributes.get(ORG_ID)).toBe(a.org.id);
  });

  it('runs the work once when a relay died after starting the workflow but before marking the row', async () => {
    const a = await signUp(stack.api);
    const row = await queuedResend(a);
    // What the dead relay got done: the workflow started, the row still says undispatched.
    expect(
      await startOnce(stack.temporal, stack.config.TEMPORAL_TASK_QUEUE, JOB_WORKFLOWS[row.jobType]!, {
        workflowId: row.jobKey,
        orgId: row.orgId,
        description: row.description,
        args: row.args,
      }),
    ).toBe(true);
    await stack.temporal.workflow.getHandle(row.jobKey).result();
    expect(await mailsFor(row)).toBe(1);

    const relay = quickRelay();
    await relay.start();
    try {
      await eventually(() => dispatched(row));
    } finally {
      await relay.stop();
    }
    expect(await executionsOf(row.jobKey)).toBe(1);
    expect(await mailsFor(row)).toBe(1);
  });

  it('lets two relays drain one outbox without doing any job twice', async () => {
    // Six accounts: verification mails are throttled to 3 per account an hour.
    const rows = [];
    for (let i = 0; i < 6; i++) rows.push(await queuedResend(await signUp(stack.api)));
    const relays = [quickRelay(), quickRelay()];
    await Promise.all(relays.map((r) => r.start()));
    try {
      for (const row of rows) await eventually(async () => (await mailsFor(row)) === 1);
    } finally {
      await Promise.all(relays.map((r) => r.stop()));
    }
    for (const row of rows) expect(await executionsOf(row.jobKey)).toBe(1);
  });

  it("sends a mail at the next drain while an org's curator signals wait for their spacing", async () => {
    const relay = newRelay(stack, { signalSpacingMs: 60_000 });
    try {
      // Whatever is queued goes now, signals included; the next signals are due a minute later.
      while ((await relay.drainOnce()) > 0);
      const a = await signUp(stack.api);
      expect(
        (await stack.api.post('/api/memories', { token: a.token, body: { content: 'a save asks its curator for work' } })).status,
      ).toBe(201);
      const mail = await queuedResend(a);
      await relay.drainOnce();
      const rows = await query(
        stack.orm.em.fork(),
        sql<{
          job_type: string;
          sent: boolean;
        }>`select job_type, dispatched_at is not null as sent from outbox
          where org_id = ${a.org.id} and created_at >= ${mail.createdAt}::timestamptz - interval '1 minute'`,
      );
      expect(rows.filter((r) => r.job_type === CURATE_JOB).map((r) => r.sent)).toEqual([false]);
      expect(rows.find((r) => r.job_type === VERIFICATION_MAIL_JOB)?.sent).toBe(true);
    } finally {
      await relay.stop();
    }
  });

  it('renews the lease of the rows a batch has not dispatched yet once half of it has passed', async () => {
    for (let i = 0; i < 10; i++) await queuedResend(await signUp(stack.api));
    const pending = () =>
      query(
        stack.orm.em.fork(),
        sql<{
          id: string;
          claimed_until: string | null;
        }>`select id, claimed_until from outbox where dispatched_at is null order by created_at desc, id desc`,
      );
    expect((await pending()).length).toBeGreaterThanOrEqual(10);
    // A 50 ms lease: twenty-odd starts take longer, so the batch renews it before its last row goes out.
    const relay = newRelay(stack, { leaseSeconds: 0.05 });
    let finished = false;
    const draining = relay.drainOnce().finally(() => (finished = true));
    const leasesOfLast = new Set<string>();
    const last = (await pending())[0]!.id;
    while (!finished) {
      const row = (await pending()).find((r) => r.id === last);
      if (row?.claimed_until) leasesOfLast.add(row.claimed_until);
    }
    expect(await draining).toBeGreaterThanOrEqual(10);
    expect(await pending()).toEqual([]);
    expect(leasesOfLast.size).toBeGreaterThan(1);
  });
});

describe('worker process stopped between commit and dispatch', () => {
  let child: ChildProcess | undefined;
  const startWorkerProcess = async () => {
    child = spawn(process.execPath, ['temporal/worker-main.ts'], {
      // Without the model, as this file's stack runs: loading it would only slow the restart down.
      env: {
        ...process.env,
        DATABASE_URL: stack.config.DATABASE_URL,
        TEMPORAL_ADDRESS: stack.config.TEMPORAL_ADDRESS,
        TEMPORAL_TASK_QUEUE: `${stack.config.TEMPORAL_TASK_QUEUE}-proc`,
        LOG_LEVEL: 'warn',
        EMBEDDING_PROVIDER: 'none',
        WORKER_METRICS_PORT: String(await freePort()),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    return child;
  };
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('delivers what was committed while the process was down, once, after it restarts', async () => {
    const a = await signUp(stack.api);
    const running = await startWorkerProcess();
    // Let the real process come up (its worker polls its task queue), then kill it without any chance to clean up.
    await eventually(async () => {
      const queue = await stack.temporal.workflowService.describeTaskQueue({
        namespace: stack.config.TEMPORAL_NAMESPACE,
        taskQueue: { name: `${stack.config.TEMPORAL_TASK_QUEUE}-proc` },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return (queue.pollers?.length ?? 0) > 0;
    });
    running.kill('SIGKILL');
    await new Promise((r) => running.once('exit', r));

    // No relay runs while the process is dead: the row waits.
    const row = await queuedResend(a);
    expect((await outboxRows(sql`id = ${row.id}`))[0]!.dispatchedAt).toBeNull();
    expect(await executionsOf(row.jobKey)).toBe(0);

    await startWorkerProcess();
    await eventually(async () => (await mailsFor(row)) === 1, 30_000);
    await eventually(() => dispatched(row));
    expect(await executionsOf(row.jobKey)).toBe(1);
    expect(await mailsFor(row)).toBe(1);
  });
});

describe('rows that cannot be dispatched', () => {
  const insertRow = async (jobType: string, jobKey: string, orgId = NO_ORG) => {
    const [row] = await query(
      stack.orm.em.fork(),
      sql<{ id: string }>`insert into outbox (id, org_id, job_type, job_key, args, description, created_at)
        values (gen_random_uuid(), ${orgId}, ${jobType}, ${jobKey}, '[]'::jsonb, 'test row', now() - interval '1 minute') returning id`,
    );
    return row!.id;
  };
  const rowOf = async (id: string) =>
    (
      await query(
        stack.orm.em.fork(),
        sql<{
          attempts: number;
          last_error: string | null;
          dispatched_at: string | null;
          next_attempt_at: string | null;
          failed_at: string | null;
          claimed_until: string | null;
        }>`
      select attempts, last_error, dispatched_at, next_attempt_at, failed_at, claimed_until from outbox where id = ${id}`,
      )
    )[0]!;

  it('back off, are parked as failed after the last attempt, and never hold up the rows behind them', async () => {
    const bad = await insertRow('no_such_job', `no-such-job-${Date.now()}`);
    const good = await queuedResend(await signUp(stack.api));
    const relay = quickRelay();
    await relay.start();
    try {
      const first = await eventually(async () => {
        const r = await rowOf(bad);
        return r.attempts === 1 ? r : undefined;
      });
      expect(first.last_error).toContain('no workflow for job type no_such_job');
      expect(first.dispatched_at).toBeNull();
      expect(first.claimed_until).toBeNull();
      expect(Date.parse(first.next_attempt_at!)).toBeGreaterThan(Date.now());
      // Backing off: the relay polls every 100 ms, yet the row is not tried again before its time (a second
      // after the first attempt; read the moment it was set, not when this test first saw it).
      const [{ due }] = (await query(
        stack.orm.em.fork(),
        sql<{ due: number }>`select (extract(epoch from (${first.next_attempt_at}::timestamptz - now())) * 1000)::float8 as due`,
      )) as [{ due: number }];
      expect(due).toBeLessThanOrEqual(1000);
      await new Promise((r) => setTimeout(r, Math.max(0, due - 150)));
      expect((await rowOf(bad)).attempts).toBe(1);
      // The row behind the bad one went out.
      await eventually(async () => (await mailsFor(good)) === 1);

      // Its last attempt comes due: it fails once more and is parked.
      await query(stack.orm.em.fork(), sql`update outbox set attempts = ${MAX_ATTEMPTS - 1}, next_attempt_at = now() where id = ${bad}`);
      const parked = await eventually(async () => {
        const r = await rowOf(bad);
        return r.failed_at ? r : undefined;
      });
      expect(parked.attempts).toBe(MAX_ATTEMPTS);
      expect(parked.dispatched_at).toBeNull();
      // Parked rows are never claimed again.
      await query(stack.orm.em.fork(), sql`update outbox set next_attempt_at = now() where id = ${bad}`);
      await new Promise((r) => setTimeout(r, 400));
      expect((await rowOf(bad)).attempts).toBe(MAX_ATTEMPTS);
    } finally {
      await relay.stop();
    }
  });

  it('hold no transaction while Temporal is called, and stay queued untouched while Temporal cannot be reached', async () => {
    // A "Temporal" that accepts connections and never answers: the dispatch hangs in the call.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const address = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
    // No client-side retries: once it is gone, the call fails at once instead of after the retry schedule.
    const unreachable = new Client({
      connection: Connection.lazy({ address, connectTimeout: 60_000, interceptors: [] }),
      namespace: 'default',
    });
    const relay = newRelay(stack, { client: unreachable, webhookRetrySchedule: [0] });

    const a = await signUp(stack.api);
    const row = await queuedResend(a);
    const draining = relay.drainOnce();
    const claimed = await eventually(async () => {
      const r = await rowOf(row.id);
      return r.claimed_until ? r : undefined;
    });
    expect(Date.parse(claimed.claimed_until!)).toBeGreaterThan(Date.now());
    const open = await query(
      stack.orm.em.fork(),
      sql<{
        n: number;
      }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`,
    );
    expect(open[0]!.n).toBe(0);

    // Temporal goes away for good: the row is released as it was, its attempts not spent.
    for (const socket of sockets) socket.destroy();
    silent.close();
    expect(await draining).toBe(0);
    const released = await rowOf(row.id);
    expect(released).toMatchObject({ attempts: 0, dispatched_at: null, claimed_until: null, failed_at: null, next_attempt_at: null });
    expect(released.last_error).toBeTruthy();
    await unreachable.connection.close().catch(() => undefined);

    // A relay that can reach Temporal sends it.
    const working = quickRelay();
    await working.start();
    try {
      await eventually(async () => (await mailsFor(row)) === 1);
    } finally {
      await working.stop();
    }
  });
});

describe('relay across a PostgreSQL restart', () => {
  let server: PrivatePostgres | undefined;
  let orm: MikroORM | undefined;
  afterAll(async () => {
    await orm?.close();
    await server?.stop();
  });

  it('listens again once the server is back: rows go out on notification, not on the (slow) poll', async () => {
    server = await PrivatePostgres.start();
    orm = await openOrm({ databaseUrl: server.url, poolMax: 2 });
    await migrate(orm);
    const taskQueue = `${stack.config.TEMPORAL_TASK_QUEUE}-restart`;
    const relay = newRelay(stack, { orm, taskQueue, databaseUrl: server.url, pollIntervalMs: 600_000, webhookRetrySchedule: [0] });
    const insert = async (label: string) => {
      const key = `restart-${label}-${randomUUID()}`;
      await query(
        orm!.em.fork(),
        sql`insert into outbox (id, org_id, job_type, job_key, args, description, created_at)
        values (gen_random_uuid(), ${NO_ORG}, ${VERIFICATION_MAIL_JOB}, ${key}, '["00000000-0000-0000-0000-000000000000"]'::jsonb,
          'restart probe', now())`,
      );
      return key;
    };
    const dispatched = (key: string) =>
      eventually(
        async () =>
          (
            await query(
              orm!.em.fork(),
              sql<{ ok: boolean }>`select dispatched_at is not null as ok from outbox where job_key = ${key}`,
            ).catch(() => [])
          )[0]?.ok,
        10_000,
      );

    await relay.start();
    try {
      await dispatched(await insert('before'));
      await server.restart();
      // The first row after the restart may ride on the reconnection's own drain; the next one needs LISTEN.
      await dispatched(await insert('during'));
      await dispatched(await insert('after'));
    } finally {
      await relay.stop();
    }
    for (const label of ['before', 'during', 'after']) {
      const keys = await query(
        orm.em.fork(),
        sql<{ job_key: string }>`select job_key from outbox where job_key like ${`restart-${label}-%`}`,
      );
      expect(await stack.temporal.workflow.getHandle(keys[0]!.job_key).describe()).toMatchObject({ taskQueue });
    }
  });
});
