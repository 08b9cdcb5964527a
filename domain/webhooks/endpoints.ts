import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { requireRole } from '../accounts/roles.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { query, queryOne, sql, toDate, toDateOrNull } from '../sql.ts';
import { sealSecret } from './secrets.ts';
import { checkTarget } from './targets.ts';
import type { WebhookEvent } from './events.ts';

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

// The endpoint table in raw SQL: its writes record audit rows in the same transaction (docs/architecture.md,
// "Data access"). Timestamps travel as ISO text, as pg returns them; the secret columns are never read here.
export interface EndpointView {
  id: string;
  url: string;
  events: WebhookEvent[];
  description: string;
  enabled: boolean;
  // Epoch milliseconds, as in the API.
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  consecutiveFailures: number;
  createdAt: number;
  updatedAt: number;
}

interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  last_success_at: string | null;
  last_failure_at: string | null;
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
}

const COLUMNS = sql`id, url, events, description, enabled, last_success_at, last_failure_at, consecutive_failures, created_at, updated_at`;

const endpointView = (r: EndpointRow): EndpointView => ({
  id: r.id,
  url: r.url,
  // Only the events an endpoint can subscribe to are stored.
  events: r.events as WebhookEvent[],
  description: r.description,
  enabled: r.enabled,
  lastSuccessAt: toDateOrNull(r.last_success_at)?.getTime() ?? null,
  lastFailureAt: toDateOrNull(r.last_failure_at)?.getTime() ?? null,
  consecutiveFailures: r.consecutive_failures,
  createdAt: toDate(r.created_at).getTime(),
  updatedAt: toDate(r.updated_at).getTime(),
});

const at = (date: Date) => sql`${date.toISOString()}::timestamptz`;

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
): Promise<{ endpoint: EndpointView; secret: string }> {
  requireRole(caller, 'admin');
  await allowedUrl(input.url, allowPrivate);
  return em.transactional(async (tx) => {
    const count = await queryOne(tx, sql<{ n: number }>`select count(*)::int as n from webhook_endpoints where org_id = ${caller.orgId}`);
    if (count!.n >= MAX_ENDPOINTS) {
      throw conflict('endpoint_limit', `at most ${MAX_ENDPOINTS} webhook endpoints per org: delete one first`);
    }
    const now = new Date();
    const id = newId();
    const secret = newSecret();
    const events = [...new Set(input.events)];
    const row = (await queryOne(
      tx,
      sql<EndpointRow>`insert into webhook_endpoints (org_id, id, url, events, description, enabled, secret, secret_sealed,
          last_success_at, last_failure_at, consecutive_failures, created_at, updated_at)
        values (${caller.orgId}, ${id}, ${input.url}, ${events}::text[], ${input.description ?? ''}, ${input.enabled ?? true}, null,
          ${sealSecret(escrowKey, caller.orgId, id, secret)}, null, null, 0, ${at(now)}, ${at(now)})
        returning ${COLUMNS}`,
    ))!;
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'webhook.create',
      targetId: id,
      actor: actorOf(caller),
      details: { url: input.url, events },
    });
    return { endpoint: endpointView(row), secret };
  });
}

export async function listEndpoints(em: EntityManager, orgId: string): Promise<EndpointView[]> {
  const rows = await query(em, sql<EndpointRow>`select ${COLUMNS} from webhook_endpoints where org_id = ${orgId} order by created_at, id`);
  return rows.map(endpointView);
}

export async function getEndpoint(em: EntityManager, orgId: string, id: string): Promise<EndpointView> {
  const row = await queryOne(em, sql<EndpointRow>`select ${COLUMNS} from webhook_endpoints where org_id = ${orgId} and id = ${id}`);
  if (!row) throw notFound('webhook endpoint', id);
  return endpointView(row);
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
    const sets = [sql`updated_at = ${at(new Date())}`];
    if (patch.url !== undefined) sets.push(sql`url = ${patch.url}`);
    if (patch.events !== undefined) sets.push(sql`events = ${[...new Set(patch.events)]}::text[]`);
    if (patch.description !== undefined) sets.push(sql`description = ${patch.description}`);
    if (patch.enabled !== undefined) {
      sets.push(sql`enabled = ${patch.enabled}`);
      if (patch.enabled) sets.push(sql`consecutive_failures = 0`);
    }
    const updated = await queryOne(
      tx,
      sql`update webhook_endpoints set ${sql.join(sets)} where org_id = ${caller.orgId} and id = ${id} returning id`,
    );
    if (!updated) throw notFound('webhook endpoint', id);
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
    const deleted = await queryOne(tx, sql`delete from webhook_endpoints where org_id = ${caller.orgId} and id = ${id} returning id`);
    if (!deleted) throw notFound('webhook endpoint', id);
    await recordAudit(tx, { orgId: caller.orgId, action: 'webhook.delete', targetId: id, actor: actorOf(caller) });
  });
}
