import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { startStripeMock } from '../support/stripe-mock.ts';
import { eventually, signUp, startStack, type Stack } from '../support/stack.ts';

const WEBHOOK_SECRET = 'whsec_test_billing_secret';
let stack: Stack;
let bare: Stack;
let mock: Awaited<ReturnType<typeof startStripeMock>>;
const signer = new Stripe('sk_test_signer');

beforeAll(async () => {
  mock = await startStripeMock();
  stack = await startStack({ env: { STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: mock.url } });
  bare = await startStack({ relay: false, worker: false, databaseUrl: stack.config.DATABASE_URL });
});
afterAll(async () => {
  await stack?.close();
  await bare?.close();
  mock?.stop();
});

function send(event: object, opts: { header?: string; secret?: string; target?: Stack } = {}) {
  const payload = JSON.stringify(event);
  const signature = signer.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? WEBHOOK_SECRET });
  return (opts.target ?? stack).api.post('/api/billing/webhook', {
    rawBody: payload,
    headers: { [opts.header ?? 'payment-signature']: signature },
  });
}

const orgRow = async (id: string) =>
  (
    await query(
      stack.orm.em.fork(),
      sql<{
        plan: string;
        stripe_customer_id: string | null;
        stripe_subscription_id: string | null;
        billing_status: string | null;
      }>`select plan, stripe_customer_id, stripe_subscription_id, billing_status from orgs where id = ${id}`,
    )
  )[0]!;

const evt = (type: string, object: Record<string, unknown>) => ({
  id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
  object: 'event',
  type,
  data: { object },
});

describe('billing', () => {
  it('creates a checkout session for a free org, 400 once paid, 403 for non-owners', async () => {
    const a = await signUp(stack.api);
    const res = await stack.api.post('/api/billing/checkout', { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body.url).toMatch(/^https?:\/\//);
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${a.org.id}`);
    const paid = await stack.api.post('/api/billing/checkout', { token: a.token });
    expect(paid.status).toBe(400);
    expect(paid.body.error).toBe('already_paid');
    const b = await signUp(stack.api);
    await stack.api.post(`/api/orgs/${b.org.id}/members`, { token: b.token, body: { email: a.user.email, role: 'admin' } });
    const admin = (await stack.api.post('/api/auth/login', { body: { email: a.user.email, password: a.password, org_id: b.org.id } }))
      .cookie!;
    expect((await stack.api.post('/api/billing/checkout', { cookie: admin })).status).toBe(403);
    expect((await bare.api.post('/api/billing/checkout', { token: b.token })).body.error).toBe('billing_not_configured');
  });

  it('tells any member the plan and its usage: limits on the free plan, none on a paid one', async () => {
    const a = await signUp(stack.api);
    await stack.api.post('/api/memories', { token: a.token, body: { content: 'twelve bytes' } });
    const free = await stack.api.get('/api/billing', { token: a.token });
    expect(free.status).toBe(200);
    expect(free.body).toEqual({
      plan: 'free',
      memories_created: 1,
      memory_limit: 500,
      storage_bytes: 12,
      storage_limit_bytes: 50 * 1024 * 1024,
      llm_tokens: { month: new Date().toISOString().slice(0, 7), tokens_in: 0, tokens_out: 0, extraction_limit: 2_000_000 },
      billing_configured: true,
      upgrade_url: expect.stringMatching(/\/dashboard\/billing$/),
    });
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${a.org.id}`);
    expect((await stack.api.get('/api/billing', { token: a.token })).body).toMatchObject({
      plan: 'team',
      memory_limit: null,
      storage_limit_bytes: null,
    });
    // The same org seen by an API process without the processor's keys.
    expect((await bare.api.get('/api/billing', { token: a.token })).body.billing_configured).toBe(false);
  });

  it('opens the portal only for an org with a payment customer', async () => {
    const a = await signUp(stack.api);
    const none = await stack.api.post('/api/billing/portal', { token: a.token });
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('no_payment_customer');
    await query(stack.orm.em.fork(), sql`update orgs set stripe_customer_id = 'cus_test_portal' where id = ${a.org.id}`);
    const res = await stack.api.post('/api/billing/portal', { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body.url).toMatch(/^https?:\/\//);
  });

  it('verifies signatures over the raw body and records each event once', async () => {
    const a = await signUp(stack.api);
    const checkout = evt('checkout.session.completed', {
      id: 'cs_1',
      customer: `cus_${a.org.id.slice(0, 8)}`,
      subscription: 'sub_1',
      metadata: { service_org_id: a.org.id, plan: 'personal' },
    });
    const bad = await send(checkout, { secret: 'whsec_wrong' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_signature');
    const unsigned = await stack.api.post('/api/billing/webhook', { rawBody: JSON.stringify(checkout) });
    expect(unsigned.status).toBe(400);
    expect((await orgRow(a.org.id)).plan).toBe('free');

    const first = await send(checkout, { header: 'stripe-signature' });
    expect(first.body).toEqual({ ok: true, processed: true });
    const again = await send(checkout);
    expect(again.body).toEqual({ ok: true, duplicate: true });
    expect((await send(evt('customer.created', { id: 'cus_x' }))).body).toEqual({ ok: true, recorded: false });

    await eventually(async () => (await orgRow(a.org.id)).plan === 'personal');
    expect(await orgRow(a.org.id)).toEqual({
      plan: 'personal',
      stripe_customer_id: `cus_${a.org.id.slice(0, 8)}`,
      stripe_subscription_id: 'sub_1',
      billing_status: 'active',
    });
    const description = await stack.temporal.workflow.getHandle(`billing-event-${checkout.id}`).describe();
    expect(description.type).toBe('billingEventWorkflow');
    // The plan takes effect on quotas at once: a paid org has no memory quota.
    expect((await stack.api.get('/api/auth/me', { token: a.token })).body.org.plan).toBe('personal');
  });

  it('reconciles the subscription lifecycle, payment failures and refunds, with audit rows', async () => {
    const a = await signUp(stack.api);
    const customer = `cus_${a.org.id.replaceAll('-', '').slice(0, 12)}`;
    await send(evt('checkout.session.completed', { id: 'cs_2', customer, subscription: 'sub_2', metadata: { service_org_id: a.org.id } }));
    await eventually(async () => (await orgRow(a.org.id)).plan === 'team');
    await send(evt('customer.subscription.updated', { id: 'sub_2', customer, status: 'active', metadata: { plan: 'enterprise' } }));
    await eventually(async () => (await orgRow(a.org.id)).plan === 'enterprise');
    await send(evt('invoice.payment_failed', { id: 'in_1', customer }));
    await eventually(async () => (await orgRow(a.org.id)).billing_status === 'past_due');
    await send(evt('charge.refunded', { id: 'ch_1', customer }));
    await send(evt('customer.subscription.deleted', { id: 'sub_2', customer, status: 'canceled' }));
    await eventually(async () => (await orgRow(a.org.id)).plan === 'free');
    expect(await orgRow(a.org.id)).toMatchObject({
      billing_status: 'canceled',
      stripe_subscription_id: null,
      stripe_customer_id: customer,
    });
    const audit = await eventually(async () => {
      const events = (await stack.api.get('/api/events?action=billing.', { token: a.token })).body.events;
      return events.length === 5 ? events : undefined;
    });
    expect(audit.map((e: { action: string }) => e.action).sort()).toEqual([
      'billing.charge.refunded',
      'billing.checkout.session.completed',
      'billing.customer.subscription.deleted',
      'billing.customer.subscription.updated',
      'billing.invoice.payment_failed',
    ]);
  });

  it('answers 503 billing_not_configured without a webhook secret', async () => {
    const res = await send(evt('checkout.session.completed', {}), { target: bare });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('billing_not_configured');
  });
});
