import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { maintenanceWorkflow } from '../../workflows/maintenance.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

let stack: Stack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  stack = await startStack({
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1,1', WRITE_RATE_LIMIT_PER_MINUTE: '0' },
  });
});
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

async function endpoint(a: SignedUp, events = ['memory.saved', 'memory.updated', 'memory.deleted']) {
  const res = await stack.api.post('/api/webhooks', { token: a.token, body: { url: receiver.url, events } });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

const deliveries = async (a: SignedUp, id: string) =>
  (await stack.api.get(`/api/webhooks/${id}/deliveries`, { token: a.token })).body.deliveries;

describe('webhook delivery', () => {
  it('delivers each subscribed event once, signed as Standard Webhooks', async () => {
    const a = await signUp(stack.api);
    const ep = await endpoint(a, ['memory.saved', 'memory.deleted']);
    const memory = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'hook me', namespace: 'hooks' } })).body;
    await stack.api.patch(`/api/memories/${memory.id}`, { token: a.token, body: { tags: ['x'] } });
    await stack.api.delete(`/api/memories/${memory.id}`, { token: a.token });

    const mine = await eventually(async () => {
      const got = receiver.received.filter((r) => r.body.includes(memory.id));
      return got.length >= 2 ? got : undefined;
    });
    // Every event of the memory has been fanned out (its three events are dispatched), so a third delivery
    // (of the update, not subscribed) would exist by now: there is none.
    await eventually(async () => {
      const [row] = await query(
        stack.orm.em.fork(),
        sql<{ n: number }>`select count(*)::int as n from events where data->>'id' = ${memory.id} and dispatched_at is null`,
      );
      return row!.n === 0;
    });
    expect(await deliveries(a, ep.id)).toHaveLength(2);
    expect(receiver.received.filter((r) => r.body.includes(memory.id))).toHaveLength(2);
    // Each delivery is a workflow of its own: they may arrive in either order (receivers order by timestamp).
    const bodies = mine.map((r) => JSON.parse(r.body));
    const saved = bodies.find((b) => b.type === 'memory.saved');
    const deleted = bodies.find((b) => b.type === 'memory.deleted');
    expect(saved).toMatchObject({ type: 'memory.saved', data: { id: memory.id, content: 'hook me', namespace: 'hooks' } });
    expect(saved.data).toEqual(memory);
    expect(new Date(saved.timestamp).toISOString()).toBe(saved.timestamp);
    expect(deleted).toEqual({ type: 'memory.deleted', timestamp: expect.any(String), data: { id: memory.id, namespace: 'hooks' } });
    for (const r of mine) {
      expect(() => new Webhook(ep.secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
      expect(r.headers['webhook-signature']).toMatch(/^v1,/);
    }
    const list = await eventually(async () => {
      const d = await deliveries(a, ep.id);
      return d.length === 2 && d.every((x: { status: string }) => x.status === 'succeeded') ? d : undefined;
    });
    expect(list[0].attempts).toHaveLength(1);
    expect(list[0].attempts[0].status_code).toBe(200);
    const got = (await stack.api.get(`/api/webhooks/${ep.id}`, { token: a.token })).body;
    expect(got.last_success_at).toEqual(expect.any(Number));
    expect(got.consecutive_failures).toBe(0);
  });

  it('retries on the schedule with the same webhook-id, then succeeds', async () => {
    const a = await signUp(stack.api);
    const ep = await endpoint(a, ['memory.saved']);
    receiver.script.push(500, 503);
    const memory = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'retry me' } })).body;
    const tries = await eventually(async () => {
      const got = receiver.received.filter((r) => r.body.includes(memory.id));
      return got.length === 3 ? got : undefined;
    });
    expect(new Set(tries.map((t) => t.headers['webhook-id'])).size).toBe(1);
    for (const t of tries) expect(() => new Webhook(ep.secret).verify(t.body, t.headers as Record<string, string>)).not.toThrow();
    const [delivery] = await eventually(async () => {
      const d = await deliveries(a, ep.id);
      return d[0]?.status === 'succeeded' ? d : undefined;
    });
    expect(delivery.attempts.map((x: { status_code: number }) => x.status_code)).toEqual([500, 503, 200]);
    expect(delivery.attempt_count).toBe(3);
  });

  it('fails after the last attempt, can be sent again, and a 410 disables the endpoint', async () => {
    const a = await signUp(stack.api);
    const ep = await endpoint(a, ['memory.saved']);
    receiver.script.push(500, 500, 500);
    await stack.api.post('/api/memories', { token: a.token, body: { content: 'doomed delivery' } });
    const [failed] = await eventually(async () => {
      const d = await deliveries(a, ep.id);
      return d[0]?.status === 'failed' ? d : undefined;
    });
    expect(failed.attempts).toHaveLength(3);
    expect((await stack.api.get(`/api/webhooks/${ep.id}`, { token: a.token })).body.consecutive_failures).toBe(3);

    const again = await stack.api.post(`/api/webhooks/${ep.id}/deliveries/${failed.id}/retry`, { token: a.token });
    expect(again.status).toBe(202);
    await eventually(async () =>
      (await deliveries(a, ep.id)).find((d: { id: string; status: string }) => d.id === again.body.delivery_id && d.status === 'succeeded'),
    );
    expect((await stack.api.get(`/api/webhooks/${ep.id}`, { token: a.token })).body.consecutive_failures).toBe(0);
    expect((await stack.api.post(`/api/webhooks/${ep.id}/deliveries/${crypto.randomUUID()}/retry`, { token: a.token })).status).toBe(404);

    receiver.script.push(410);
    await stack.api.post('/api/memories', { token: a.token, body: { content: 'gone' } });
    await eventually(async () => (await stack.api.get(`/api/webhooks/${ep.id}`, { token: a.token })).body.enabled === false);
    const count = receiver.received.length;
    const deliveredBefore = (await deliveries(a, ep.id)).length;
    const skipped = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'not sent: endpoint disabled' } })).body;
    // With no enabled endpoint subscribed, the save writes no event at all (in its own statement), so
    // nothing can ever be delivered for it.
    const [events] = await query(
      stack.orm.em.fork(),
      sql<{ n: number }>`select count(*)::int as n from events where data->>'id' = ${skipped.id}`,
    );
    expect(events!.n).toBe(0);
    expect(await deliveries(a, ep.id)).toHaveLength(deliveredBefore);
    expect(receiver.received.length).toBe(count);
  });
});

describe('endpoint health and the connection-time address check', () => {
  it('disables an endpoint failing for days and cancels what was still pending', async () => {
    const a = await signUp(stack.api);
    const ep = await endpoint(a, ['memory.saved']);
    await stack.orm.em
      .fork()
      .getConnection()
      .execute(
        `update webhook_endpoints set consecutive_failures = 19, created_at = now() - interval '4 days',
            last_success_at = now() - interval '4 days' where id = ?`,
        [ep.id],
      );
    receiver.script.push(500);
    await stack.api.post('/api/memories', { token: a.token, body: { content: 'the twentieth failure' } });
    await eventually(async () => (await stack.api.get(`/api/webhooks/${ep.id}`, { token: a.token })).body.enabled === false);
    const [delivery] = await eventually(async () => {
      const d = await deliveries(a, ep.id);
      return d[0] && d[0].status !== 'pending' ? d : undefined;
    });
    expect(delivery.status).toBe('cancelled');
    expect(delivery.attempts).toHaveLength(1);
  });

  it('refuses a private address at connection time when private targets are not allowed', async () => {
    const { createWebhookSender } = await import('../../infra/webhook-sender.ts');
    const host = receiver.url.replace('127.0.0.1', 'localhost');
    const refused = await createWebhookSender(false)(host, {}, '{}');
    expect(refused.statusCode).toBeUndefined();
    expect(refused.error).toMatch(/non-public address/);
    const allowed = await createWebhookSender(true)(host, {}, '{}');
    expect(allowed.statusCode).toBe(200);
  });

  it("keeps signing secrets sealed, and seals those written before in the worker's maintenance", async () => {
    const a = await signUp(stack.api);
    const ep = await endpoint(a, ['memory.saved']);
    const row = async () =>
      (
        await query(
          stack.orm.em.fork(),
          sql<{
            secret: string | null;
            sealed: Buffer | null;
          }>`select secret, secret_sealed as sealed from webhook_endpoints where id = ${ep.id}`,
        )
      )[0]!;
    const stored = await row();
    // Neither the secret nor its key material is in the row.
    expect(stored.secret).toBeNull();
    expect(stored.sealed!.includes(Buffer.from(ep.secret.slice('whsec_'.length), 'base64'))).toBe(false);
    const deliveredWith = async (secret: string, content: string) => {
      const memory = (await stack.api.post('/api/memories', { token: a.token, body: { content } })).body;
      const got = await eventually(async () => receiver.received.find((r) => r.body.includes(memory.id)));
      expect(() => new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).not.toThrow();
    };
    await deliveredWith(ep.secret, 'signed with a sealed secret');
    // An endpoint as it was stored before sealing: its plain secret still signs, until maintenance seals it.
    const legacy = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    await query(stack.orm.em.fork(), sql`update webhook_endpoints set secret = ${legacy}, secret_sealed = null where id = ${ep.id}`);
    await deliveredWith(legacy, 'signed with a plain secret');
    await stack.temporal.workflow.execute(maintenanceWorkflow, {
      taskQueue: stack.config.TEMPORAL_TASK_QUEUE,
      workflowId: `maintenance-test-${ep.id}`,
      args: [],
    });
    expect((await row()).secret).toBeNull();
    await deliveredWith(legacy, 'signed with the same secret, sealed since');
    // A secret sealed under another key cannot sign: the delivery fails at once, saying why, rather than retry.
    await query(stack.orm.em.fork(), sql`update webhook_endpoints set secret_sealed = ${Buffer.alloc(60, 1)} where id = ${ep.id}`);
    const memory = (await stack.api.post('/api/memories', { token: a.token, body: { content: 'cannot be signed' } })).body;
    const failed = await eventually(async () => {
      const list = (await deliveries(a, ep.id)) as { status: string; attempts?: { error: string }[]; payload?: string }[];
      return list.find((d) => d.status === 'failed');
    });
    expect(JSON.stringify(failed)).toContain('cannot be unsealed');
    expect(receiver.received.some((r) => r.body.includes(memory.id))).toBe(false);
  });
});
