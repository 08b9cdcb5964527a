import { z } from 'zod';
import { invalid, notFound } from '../../domain/errors.ts';
import { requireRole } from '../../domain/accounts/roles.ts';
import { DELIVERY_STATUSES, listDeliveries } from '../../domain/webhooks/deliveries.ts';
import { redeliver } from '../../domain/webhooks/fanout.ts';
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, updateEndpoint } from '../../domain/webhooks/endpoints.ts';
import { WEBHOOK_EVENTS } from '../../domain/webhooks/events.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { intParam } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { postWebhooks } from './descriptions.ts';

const deliverySchema = z
  .object({
    id: z.uuid(),
    event_id: z.number().int(),
    event_type: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempt_count: z.number().int(),
    created_at: epochMs,
    completed_at: epochMs.nullable(),
    attempts: z.array(
      z.object({
        attempt: z.number().int(),
        status_code: z.number().int().nullable(),
        error: z.string().nullable(),
        duration_ms: z.number().int(),
        at: epochMs,
      }),
    ),
  })
  .meta({ id: 'WebhookDelivery' });
const deliveryJson = wireOf(deliverySchema);

const endpointSchema = z
  .object({
    id: z.uuid(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    description: z.string(),
    enabled: z.boolean(),
    last_success_at: epochMs.nullable(),
    last_failure_at: epochMs.nullable(),
    consecutive_failures: z.number().int(),
    created_at: epochMs,
    updated_at: epochMs,
  })
  .meta({ id: 'WebhookEndpoint' });

const endpointJson = wireOf(endpointSchema);

const url = z.url({ protocol: /^https?$/ }).max(2048);
const events = z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length);
const description = z.string().max(500);
const idParams = z.object({ id: z.uuid() });

export function webhookRoutes(deps: ApiDeps): AnyRoute[] {
  const allowPrivate = deps.config.WEBHOOK_ALLOW_PRIVATE_TARGETS;
  return [
    defineRoute({
      method: 'post',
      path: '/api/webhooks',
      tag: 'webhooks',
      access: 'caller',
      summary: 'Register a webhook endpoint; the signing secret is shown only in this answer',
      description: postWebhooks,
      body: z.object({ url, events, description: description.optional(), enabled: z.boolean().optional() }),
      responses: {
        201: { description: 'Registered', schema: endpointSchema.extend({ secret: z.string().startsWith('whsec_') }) },
        400: { description: 'Also `webhook_target_not_allowed`' },
        403: { description: 'Needs the admin or owner role' },
        409: { description: '`endpoint_limit`: the org has 25 endpoints already' },
      },
      handler: async (ctx, { body }) => {
        const { endpoint, secret } = await createEndpoint(ctx.state.em, callerOf(ctx), body, allowPrivate, deps.config.byokEscrowKey);
        ctx.status = 201;
        ctx.body = { ...endpointJson(endpoint), secret };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/webhooks',
      tag: 'webhooks',
      access: 'caller',
      summary: 'Webhook endpoints of the org (never their secrets)',
      responses: { 200: { description: 'Endpoints', schema: z.object({ endpoints: z.array(endpointSchema) }) } },
      handler: async (ctx) => {
        ctx.body = { endpoints: (await listEndpoints(ctx.state.em, callerOf(ctx).orgId)).map(endpointJson) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/webhooks/:id',
      tag: 'webhooks',
      access: 'caller',
      summary: 'One webhook endpoint (never its secret)',
      params: idParams,
      responses: { 200: { description: 'The endpoint', schema: endpointSchema }, 404: { description: 'Not in this org' } },
      handler: async (ctx, { params }) => {
        ctx.body = endpointJson(await getEndpoint(ctx.state.em, callerOf(ctx).orgId, params.id));
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/webhooks/:id',
      tag: 'webhooks',
      access: 'caller',
      summary: 'Change url, events (replaced), enabled or description',
      params: idParams,
      body: z.object({
        url: url.optional(),
        events: events.optional(),
        description: description.optional(),
        enabled: z.boolean().optional(),
      }),
      responses: {
        200: { description: 'Updated', schema: z.object({ id: z.uuid(), updated: z.literal(true) }) },
        403: { description: 'Needs the admin or owner role' },
        404: { description: 'Not in this org' },
      },
      handler: async (ctx, { params, body }) => {
        if (Object.values(body).every((v) => v === undefined))
          throw invalid('no patchable fields supplied', 'send at least one of url, events, description, enabled');
        await updateEndpoint(ctx.state.em, callerOf(ctx), params.id, body, allowPrivate);
        ctx.body = { id: params.id, updated: true };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/webhooks/:id/deliveries',
      tag: 'webhooks',
      access: 'caller',
      summary: "The endpoint's deliveries, newest first, each with its attempts",
      params: idParams,
      query: z.object({ limit: intParam(1, 500).default(50) }),
      responses: {
        200: { description: 'Deliveries', schema: z.object({ deliveries: z.array(deliverySchema) }) },
        404: { description: 'Not in this org' },
      },
      handler: async (ctx, { params, query }) => {
        const { orgId } = callerOf(ctx);
        await getEndpoint(ctx.state.em, orgId, params.id);
        const rows = await listDeliveries(ctx.state.em, orgId, params.id, query.limit);
        ctx.body = { deliveries: rows.map(deliveryJson) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/webhooks/:id/deliveries/:deliveryId/retry',
      tag: 'webhooks',
      access: 'caller',
      summary: 'Send a finished (failed, cancelled or succeeded) delivery again, as a new delivery',
      params: z.object({ id: z.uuid(), deliveryId: z.uuid() }),
      responses: {
        202: { description: 'Queued', schema: z.object({ delivery_id: z.uuid() }) },
        404: { description: 'No such finished delivery of this endpoint' },
      },
      handler: async (ctx, { params }) => {
        const caller = callerOf(ctx);
        await getEndpoint(ctx.state.em, caller.orgId, params.id);
        requireRole(caller, 'admin');
        const id = await redeliver(ctx.state.em, caller.orgId, params.id, params.deliveryId, deps.config.WEBHOOK_RETRY_SCHEDULE);
        if (!id) throw notFound('webhook delivery', params.deliveryId);
        ctx.status = 202;
        ctx.body = { delivery_id: id };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/webhooks/:id',
      tag: 'webhooks',
      access: 'caller',
      summary: 'Remove a webhook endpoint',
      params: idParams,
      responses: {
        204: { description: 'Removed' },
        403: { description: 'Needs the admin or owner role' },
        404: { description: 'Not in this org' },
      },
      handler: async (ctx, { params }) => {
        await deleteEndpoint(ctx.state.em, callerOf(ctx), params.id);
        ctx.status = 204;
      },
    }),
  ];
}
