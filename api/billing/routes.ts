import Stripe from 'stripe';
import { z } from 'zod';
import { PLANS } from '../../domain/accounts/enums.ts';
import { requireRole } from '../../domain/accounts/roles.ts';
import { orgBilling } from '../../domain/accounts/rows.ts';
import { receiveEvent, type ProcessorEvent } from '../../domain/billing/events.ts';
import { monthlyTokens } from '../../domain/extraction/extractions.ts';
import { usageOf } from '../../domain/memories/quota.ts';
import { AppError, invalid } from '../../domain/errors.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { upgradeUrlOf } from '../llm.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import type { AppContext } from '../http/state.ts';
import { postBillingWebhook } from './descriptions.ts';

const SIGNATURE_TOLERANCE_SECONDS = 300;

export function billingRoutes(deps: ApiDeps): AnyRoute[] {
  const { config } = deps;
  const { stripe } = deps.clients;
  const configured = (): Stripe => {
    if (!stripe) throw new AppError('unavailable', 'billing_not_configured', 'the payment processor is not configured (STRIPE_SECRET_KEY)');
    return stripe;
  };
  // Both hosted pages: owners only, a configured processor, and the org's billing state.
  const ownerBilling = async (ctx: AppContext) => {
    const caller = callerOf(ctx);
    requireRole(caller, 'owner');
    const client = configured();
    const org = (await orgBilling(ctx.state.em, caller.orgId))!;
    return { caller, client, org };
  };
  const urlSchema = z.object({ url: z.url() });

  return [
    defineRoute({
      method: 'get',
      path: '/api/billing',
      tag: 'billing',
      access: 'caller',
      summary: "The org's plan and what it used of it (any member)",
      responses: {
        200: {
          description: 'Plan and usage; limits are null on paid plans, which have none',
          schema: z.object({
            plan: z.enum(PLANS),
            memories_created: z.number().int().meta({ description: 'memories ever created (deleting gives none back)' }),
            memory_limit: z.number().int().nullable(),
            storage_bytes: z.number().int().meta({ description: 'bytes of memory content and metadata held now' }),
            storage_limit_bytes: z.number().int().nullable(),
            llm_tokens: z
              .object({
                month: z.string().meta({ description: 'the calendar month counted (UTC), YYYY-MM' }),
                tokens_in: z.number().int(),
                tokens_out: z.number().int(),
                extraction_limit: z
                  .number()
                  .int()
                  .nullable()
                  .meta({ description: 'tokens in and out a month past which extraction from conversations is skipped (null: no cap)' }),
              })
              .meta({ description: "the model tokens the org's extraction from conversations took this month" }),
            billing_configured: z.boolean().meta({ description: 'whether checkout and the portal are available' }),
            upgrade_url: z.string(),
          }),
        },
      },
      handler: async (ctx) => {
        const caller = callerOf(ctx);
        const usage = await usageOf(ctx.state.em, caller.orgId, caller.plan);
        const tokens = await monthlyTokens(ctx.state.em, caller.orgId);
        ctx.body = {
          plan: caller.plan,
          memories_created: usage.memoriesCreated,
          memory_limit: usage.memoryLimit,
          storage_bytes: usage.storageBytes,
          storage_limit_bytes: usage.storageLimitBytes,
          llm_tokens: {
            month: new Date().toISOString().slice(0, 7),
            tokens_in: tokens.in,
            tokens_out: tokens.out,
            extraction_limit: config.EXTRACTION_TOKENS_PER_MONTH || null,
          },
          billing_configured: stripe !== null,
          upgrade_url: upgradeUrlOf(config),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/billing/checkout',
      tag: 'billing',
      access: 'caller',
      summary: 'A hosted checkout to move the org to a paid plan (owners only)',
      responses: {
        200: { description: 'Redirect the user here', schema: urlSchema },
        400: { description: '`already_paid`: the org is on a paid plan' },
        403: { description: 'Not an owner' },
        503: { description: '`billing_not_configured`' },
      },
      handler: async (ctx) => {
        const { caller, client, org } = await ownerBilling(ctx);
        if (org.plan !== 'free') throw invalid('already_paid', `the org is already on the ${org.plan} plan`);
        const session = await client.checkout.sessions.create({
          mode: 'subscription',
          line_items: [{ price: config.STRIPE_PRICE_ID, quantity: 1 }],
          success_url: `${config.publicBaseUrl}/dashboard/billing?checkout=success`,
          cancel_url: `${config.publicBaseUrl}/dashboard/billing?checkout=cancelled`,
          client_reference_id: caller.orgId,
          metadata: { service_org_id: caller.orgId },
          subscription_data: { metadata: { service_org_id: caller.orgId } },
          ...(org.stripeCustomerId ? { customer: org.stripeCustomerId } : {}),
        });
        if (!session.url) throw new AppError('unavailable', 'billing_unavailable', 'the payment processor returned no checkout address');
        ctx.body = { url: session.url };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/billing/portal',
      tag: 'billing',
      access: 'caller',
      summary: "The payment processor's customer portal for this org (owners only)",
      responses: {
        200: { description: 'Redirect the user here', schema: urlSchema },
        403: { description: 'Not an owner' },
        404: { description: '`no_payment_customer`' },
        503: { description: '`billing_not_configured`' },
      },
      handler: async (ctx) => {
        const { caller, client, org } = await ownerBilling(ctx);
        if (!org.stripeCustomerId)
          throw new AppError('not_found', 'no_payment_customer', `org ${caller.orgId} has no payment customer yet; use checkout first`);
        const session = await client.billingPortal.sessions.create({
          customer: org.stripeCustomerId,
          return_url: `${config.publicBaseUrl}/dashboard/billing`,
        });
        ctx.body = { url: session.url };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/billing/webhook',
      tag: 'billing',
      access: 'public',
      write: false,
      rawBody: true,
      summary: 'Payment processor events (signature `payment-signature` or `stripe-signature` over the raw body)',
      description: postBillingWebhook,
      body: z.record(z.string(), z.unknown()),
      responses: {
        200: {
          description: 'Accepted',
          schema: z.object({
            ok: z.literal(true),
            processed: z.literal(true).optional(),
            duplicate: z.literal(true).optional(),
            recorded: z.literal(false).optional(),
          }),
        },
        400: { description: '`invalid_signature`' },
        503: { description: '`billing_not_configured`' },
      },
      handler: async (ctx) => {
        if (!config.STRIPE_WEBHOOK_SECRET) throw new AppError('unavailable', 'billing_not_configured', 'STRIPE_WEBHOOK_SECRET is not set');
        const raw = (ctx.request as unknown as { rawBody?: string }).rawBody;
        const header = ctx.get('payment-signature') || ctx.get('stripe-signature');
        let event: ProcessorEvent;
        try {
          event = Stripe.webhooks.constructEvent(
            raw ?? '',
            header,
            config.STRIPE_WEBHOOK_SECRET,
            SIGNATURE_TOLERANCE_SECONDS,
          ) as unknown as ProcessorEvent;
        } catch {
          throw invalid('invalid_signature', 'the payment-signature header does not match the body');
        }
        const receipt = await receiveEvent(ctx.state.em, event);
        ctx.body = !receipt.recorded
          ? { ok: true, recorded: false }
          : receipt.duplicate
            ? { ok: true, duplicate: true }
            : { ok: true, processed: true };
      },
    }),
  ];
}
