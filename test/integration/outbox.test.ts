import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailMessage } from '../../domain/mail/entities.ts';
import { OutboxMessage } from '../../domain/outbox/entities.ts';
import { JOB_WORKFLOWS } from '../../temporal/jobs.ts';
import { OutboxRelay } from '../../temporal/outbox-relay.ts';
import { ORG_ID } from '../../temporal/search-attributes.ts';
import { startOnce } from '../../temporal/start.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';
import { createLogger } from '../../infra/logger.ts';
import { postFrom } from '../support/from-address.ts';

// The relay is not started with the stack: each test decides when dispatch happens.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ relay: false });
});
afterAll(async () => stack?.close());

const logger = createLogger('silent', 'test');
const newRelay = () =>
  new OutboxRelay({ orm: stack.orm, client: stack.temporal, taskQueue: stack.config.TEMPORAL_TASK_QUEUE, databaseUrl: stack.config.DATABASE_URL, logger, pollIntervalMs: 100, webhookRetrySchedule: stack.config.WEBHOOK_RETRY_SCHEDULE });

// Each resend from an address of its own: mail requests are throttled per client address.
let resends = 0;
async function queuedResend(account: SignedUp): Promise<OutboxMessage> {
  const before = await stack.orm.em.fork().find(OutboxMessage, { orgId: account.org.id });
  const from = `127.0.1.${++resends}`;
  expect((await postFrom(from, new URL('/api/auth/resend-verification', stack.baseUrl).href, {}, { authorization: `Bearer ${account.token}` })).status).toBe(202);
  const rows = await stack.orm.em.fork().find(OutboxMessage, { orgId: account.org.id });
  const row = rows.find((r) => !before.some((b) => b.id === r.id));
  expect(row).toBeDefined();
  return row!;
}

const mailsFor = (row: OutboxMessage) => stack.orm.em.fork().count(MailMessage, { dedupeKey: `verification:${row.jobKey.replace('verification-mail-', '')}` });

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
    await new Promise((r) => setTimeout(r, 500));
    expect(await mailsFor(row)).toBe(0);

    const relay = newRelay();
    await relay.start();
    try {
      await eventually(async () => (await mailsFor(row)) === 1);
      const dispatched = await eventually(async () => (await stack.orm.em.fork().findOne(OutboxMessage, { id: row.id, dispatchedAt: { $ne: null } })) ?? undefined);
      expect(dispatched.attempts).toBe(1);
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
    expect(await startOnce(stack.temporal, stack.config.TEMPORAL_TASK_QUEUE, JOB_WORKFLOWS[row.jobType]!, { workflowId: row.jobKey, orgId: row.orgId ?? null, description: row.description, args: row.args })).toBe(true);
    await stack.temporal.workflow.getHandle(row.jobKey).result();
    expect(await mailsFor(row)).toBe(1);

    const relay = newRelay();
    await relay.start();
    try {
      await eventually(async () => (await stack.orm.em.fork().findOne(OutboxMessage, { id: row.id, dispatchedAt: { $ne: null } })) ?? undefined);
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
    const relays = [newRelay(), newRelay()];
    await Promise.all(relays.map((r) => r.start()));
    try {
      for (const row of rows) await eventually(async () => (await mailsFor(row)) === 1);
    } finally {
      await Promise.all(relays.map((r) => r.stop()));
    }
    for (const row of rows) expect(await executionsOf(row.jobKey)).toBe(1);
  });
});

describe('worker process stopped between commit and dispatch', () => {
  let child: ChildProcess | undefined;
  const startWorkerProcess = () => {
    child = spawn(process.execPath, ['temporal/worker-main.ts'], {
      // Without the model, as this file's stack runs: loading it would only slow the restart down.
      env: { ...process.env, DATABASE_URL: stack.config.DATABASE_URL, TEMPORAL_ADDRESS: stack.config.TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: `${stack.config.TEMPORAL_TASK_QUEUE}-proc`, LOG_LEVEL: 'warn', EMBEDDING_PROVIDER: 'none' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    return child;
  };
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('delivers what was committed while the process was down, once, after it restarts', async () => {
    const a = await signUp(stack.api);
    const running = startWorkerProcess();
    // Let the real process come up, then kill it without any chance to clean up.
    await new Promise((r) => setTimeout(r, 1500));
    running.kill('SIGKILL');
    await new Promise((r) => running.once('exit', r));

    const row = await queuedResend(a);
    await new Promise((r) => setTimeout(r, 300));
    expect((await stack.orm.em.fork().findOneOrFail(OutboxMessage, { id: row.id })).dispatchedAt).toBeNull();

    startWorkerProcess();
    await eventually(async () => (await mailsFor(row)) === 1, 30_000);
    await eventually(async () => (await stack.orm.em.fork().findOne(OutboxMessage, { id: row.id, dispatchedAt: { $ne: null } })) ?? undefined);
    expect(await executionsOf(row.jobKey)).toBe(1);
    expect(await mailsFor(row)).toBe(1);
  });
});
