import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/ports.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { TemporalDevServer } from '../support/temporal-server.ts';
import { eventually, signUp, startStack, type Stack } from '../support/stack.ts';

// This file runs its own Temporal dev server (state in a file) so that it can stop and restart it.
let temporal: TemporalDevServer;
let dir: string;
let stack: Stack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'memsvc-restart-'));
  temporal = await TemporalDevServer.create(inject('temporalBin'), join(dir, 'temporal.db'));
  await temporal.start();
  receiver = new WebhookReceiver();
  await receiver.start();
  stack = await startStack({
    env: {
      TEMPORAL_ADDRESS: temporal.address,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0,4,4',
      WRITE_RATE_LIMIT_PER_MINUTE: '0',
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
  await temporal?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const statusOf = async (token: string, endpointId: string) =>
  (await stack.api.get(`/api/webhooks/${endpointId}/deliveries`, { token })).body.deliveries[0];

describe('webhook deliveries survive restarts', () => {
  it('completes a retrying delivery after the Temporal server is stopped and started again', async () => {
    const a = await signUp(stack.api);
    const ep = (await stack.api.post('/api/webhooks', { token: a.token, body: { url: receiver.url, events: ['memory.saved'] } })).body;
    receiver.script.push(500);
    const memory = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'survive a Temporal restart' } })).body;
    await eventually(async () => receiver.received.some((r) => r.body.includes(memory.id)));
    await temporal.stop();
    await new Promise((r) => setTimeout(r, 2000));
    await temporal.start();
    await eventually(async () => (await statusOf(a.token, ep.id))?.status === 'succeeded', 45_000);
    expect(receiver.received.filter((r) => r.body.includes(memory.id))).toHaveLength(2);
  }, 90_000);

  it('completes a retrying delivery after the worker process is SIGKILLed and started again', async () => {
    // The real worker process (worker + relay) on a task queue of its own, over this file's database.
    const queue = `${stack.config.TEMPORAL_TASK_QUEUE}-proc`;
    const metricsPort = String(await freePort());
    const spawnWorker = () =>
      spawn(process.execPath, ['temporal/worker-main.ts'], {
        env: {
          ...process.env,
          WORKER_METRICS_PORT: metricsPort,
          DATABASE_URL: stack.config.DATABASE_URL,
          TEMPORAL_ADDRESS: temporal.address,
          TEMPORAL_TASK_QUEUE: queue,
          WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
          WEBHOOK_RETRY_SCHEDULE: '0,4,4',
          LOG_LEVEL: 'warn',
          // Without the model, as this file's stack runs: at start the worker would otherwise backfill every
          // org's vectors with it and compete with the deliveries for the CPU.
          EMBEDDING_PROVIDER: 'none',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    // This file's in-process relay must not take the events: stop it while the child works.
    await stack.relay?.stop();
    const a = await signUp(stack.api);
    const ep = (await stack.api.post('/api/webhooks', { token: a.token, body: { url: receiver.url, events: ['memory.saved'] } })).body;
    receiver.script.push(500);
    let child: ChildProcess = spawnWorker();
    try {
      const memory = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'survive a worker kill' } })).body;
      // The child bundles the workflows before it polls: on a loaded 2-core machine that alone can take half a minute.
      await eventually(async () => receiver.received.some((r) => r.body.includes(memory.id)), 60_000);
      // The first attempt failed; the workflow now sleeps 4 s before the next. Kill the process meanwhile.
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      await new Promise((r) => setTimeout(r, 5000));
      expect(receiver.received.filter((r) => r.body.includes(memory.id))).toHaveLength(1);
      child = spawnWorker();
      await eventually(async () => (await statusOf(a.token, ep.id))?.status === 'succeeded', 60_000);
      expect(receiver.received.filter((r) => r.body.includes(memory.id))).toHaveLength(2);
    } finally {
      child.kill('SIGKILL');
    }
  }, 150_000);
});
