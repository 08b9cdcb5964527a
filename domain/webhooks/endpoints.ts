import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { requireRole } from '../accounts/roles.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { WebhookEndpoint } from './tables.ts';
import { sealSecret } from './secrets.ts';
import { checkTarget } from './targets.ts';

export interface EndpointInput {
  url: string;
  events: string[];
  description?: string | undefined;
  enabled?: boolean | undefined;
}

// Standard Webhooks secret: `whsec_` + base64 of 32 random bytes.
const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

async function allowedUrl(url: string, allowPrivate: boolean): Promise<void> {
  const check = await checkTarget(url, allowPrivate);
  if (!check.ok) throw invalid('webhook_target_not_allowed', check.reason);
}

// Endpoints per org: each event is delivered to every subscribed endpoint, so their number multiplies the
// delivery work of every save, and the endpoint list stays bounded.
const MAX_ENDPOINTS = 25;

// The endpoint, and its signing secret in the clear: the one time it is shown; only its sealed form is stored.
export async function createEndpoint(
  em: EntityManager,
  caller: Caller,
  input: EndpointInput,
  allowPrivate: boolean,
  escrowKey: Buffer,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  requireRole(caller, 'admin');
  await allowedUrl(input.url, allowPrivate);
  return em.transactional(async (tx) => {
    if ((await tx.count(WebhookEndpoint, { orgId: caller.orgId })) >= MAX_ENDPOINTS) {
      throw conflict('endpoint_limit', `at most ${MAX_ENDPOINTS} webhook endpoints per org: delete one first`);
    }
    const now = new Date();
    const id = newId();
    const secret = newSecret();
    const endpoint = tx.create(WebhookEndpoint, {
      id,
      orgId: caller.orgId,
      url: input.url,
      events: [...new Set(input.events)],
      description: input.description ?? '',
      enabled: input.enabled ?? true,
      secret: null,
      secretSealed: sealSecret(escrowKey, caller.orgId, id, secret),
      lastSuccessAt: null,
      lastFailureAt: null,
      consecutiveFailures: 0,
      createdAt: now,
      updatedAt: now,
    });
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'webhook.create',
      targetId: endpoint.id,
      actor: actorOf(caller),
      details: { url: input.url, events: endpoint.events },
    });
    return { endpoint, secret };
  });
}

export async function listEndpoints(em: EntityManager, orgId: string): Promise<WebhookEndpoint[]> {
  return em.find(WebhookEndpoint, { orgId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function getEndpoint(em: EntityManager, orgId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await em.findOne(WebhookEndpoint, { id, orgId });
  if (!endpoint) throw notFound('webhook endpoint', id);
  return endpoint;
}

export async function updateEndpoint(
  em: EntityManager,
  caller: Caller,
  id: string,
  patch: Partial<EndpointInput>,
  allowPrivate: boolean,
): Promise<void> {
  await getEndpoint(em, caller.orgId, id);
  requireRole(caller, 'admin');
  if (patch.url !== undefined) await allowedUrl(patch.url, allowPrivate);
  await em.transactional(async (tx) => {
    const endpoint = await getEndpoint(tx, caller.orgId, id);
    if (patch.url !== undefined) endpoint.url = patch.url;
    if (patch.events !== undefined) endpoint.events = [...new Set(patch.events)];
    if (patch.description !== undefined) endpoint.description = patch.description;
    if (patch.enabled !== undefined) {
      endpoint.enabled = patch.enabled;
      if (patch.enabled) endpoint.consecutiveFailures = 0;
    }
    endpoint.updatedAt = new Date();
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'webhook.update',
      targetId: id,
      actor: actorOf(caller),
      details: { fields: Object.keys(patch) },
    });
  });
}

export async function deleteEndpoint(em: EntityManager, caller: Caller, id: string): Promise<void> {
  await getEndpoint(em, caller.orgId, id);
  requireRole(caller, 'admin');
  await em.transactional(async (tx) => {
    const endpoint = await getEndpoint(tx, caller.orgId, id);
    tx.remove(endpoint);
    await recordAudit(tx, { orgId: caller.orgId, action: 'webhook.delete', targetId: id, actor: actorOf(caller) });
  });
}
