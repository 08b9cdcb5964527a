import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { isUuid } from '../ids.ts';
import { query, sql } from '../sql.ts';

// Who and what an audit row names, by name instead of by id, for the people reading the log (the dashboard's audit
// log and a memory's history). Every name is read from the org that owns the row and nowhere else: an id that is
// not one of the org's objects (or no longer is) gets no name, so nothing of another org can show through.

/** The person who acted, while they are a member of the org (a former member, or the service, has none). */
export interface AuditActor {
  id: string;
  name: string;
  email: string;
}

/** The credential that acted: an API token of the org (its name, null when it was given none) or a dashboard session. */
export interface AuditCredential {
  id: string;
  kind: 'api_token' | 'session';
  name: string | null;
}

export type AuditTargetKind =
  | 'memory'
  | 'project'
  | 'member'
  | 'organization'
  | 'token'
  | 'runbook'
  | 'chat_session'
  | 'entity'
  | 'webhook'
  | 'export'
  | 'deletion'
  | 'proposal'
  | 'billing_event'
  | 'other';

/** What the row is about: its kind (from the action), a label and whether the org still has it. */
export interface AuditTarget {
  kind: AuditTargetKind;
  id: string;
  label: string | null;
  exists: boolean;
}

export interface AuditNames {
  actor: AuditActor | null;
  token: AuditCredential | null;
  target: AuditTarget | null;
}

export interface AuditRowIds {
  action: string;
  targetId: string | null;
  actorUserId: string | null;
  actorToken: string | null;
  details: Record<string, unknown>;
}

// The kind of an action's target, by the action's first matching prefix (domain/*: the recordAudit calls).
const TARGET_KINDS: [string, AuditTargetKind][] = [
  ['memory.delete_by_filter', 'deletion'],
  ['memory.export', 'export'],
  ['memory.', 'memory'],
  ['project.', 'project'],
  ['org.member.', 'member'],
  ['org.', 'organization'],
  ['auth.switch_org', 'organization'],
  ['auth.', 'member'],
  ['user.', 'member'],
  ['token.', 'token'],
  ['runbook.', 'runbook'],
  ['chat.session.', 'chat_session'],
  ['entity.', 'entity'],
  ['webhook.', 'webhook'],
  ['consolidation.', 'proposal'],
  ['billing.', 'billing_event'],
];

const targetKindOf = (action: string): AuditTargetKind => TARGET_KINDS.find(([prefix]) => action.startsWith(prefix))?.[1] ?? 'other';

// A memory is labelled by the start of its content.
const MEMORY_LABEL_LENGTH = 80;

// How each kind's label is read, from the org's own rows (`ids` the ids asked for: uuids, but a billing event's id is the
// payment processor's).
const LOOKUPS: Partial<Record<AuditTargetKind, (orgId: string, ids: string[]) => RawBuilder<unknown>>> = {
  memory: (o, ids) =>
    sql`select id, case when char_length(content) > ${MEMORY_LABEL_LENGTH}
                        then left(content, ${MEMORY_LABEL_LENGTH}) || '…' else content end as label
          from memories where org_id = ${o} and id = any(${ids}::uuid[])`,
  project: (o, ids) => sql`select id, name as label from namespaces where org_id = ${o} and id = any(${ids}::uuid[])`,
  member: (o, ids) =>
    sql`select u.id, u.name as label from memberships m join users u on u.id = m.user_id
         where m.org_id = ${o} and m.user_id = any(${ids}::uuid[])`,
  organization: (o, ids) => sql`select id, name as label from orgs where id = ${o} and id = any(${ids}::uuid[])`,
  token: (o, ids) => sql`select id, name as label from credentials where org_id = ${o} and kind = 'api' and id = any(${ids}::uuid[])`,
  runbook: (o, ids) => sql`select id, title as label from runbooks where org_id = ${o} and id = any(${ids}::uuid[])`,
  chat_session: (o, ids) => sql`select id, title as label from chat_sessions where org_id = ${o} and id = any(${ids}::uuid[])`,
  entity: (o, ids) => sql`select id, display_name as label from entities where org_id = ${o} and id = any(${ids}::uuid[])`,
  webhook: (o, ids) =>
    sql`select id, coalesce(nullif(description, ''), url) as label from webhook_endpoints where org_id = ${o} and id = any(${ids}::uuid[])`,
  export: (o, ids) => sql`select id, upper(format) as label from export_jobs where org_id = ${o} and id = any(${ids}::uuid[])`,
  deletion: (o, ids) => sql`select id, null::text as label from memory_deletions where org_id = ${o} and id = any(${ids}::uuid[])`,
  proposal: (o, ids) => sql`select id, null::text as label from consolidation_proposals where org_id = ${o} and id = any(${ids}::uuid[])`,
  billing_event: (o, ids) => sql`select id, outcome as label from billing_events where org_id = ${o} and id = any(${ids}::text[])`,
};
const TEXT_IDS = new Set<AuditTargetKind>(['billing_event']);

// The name a row's own details kept of what it acted on (a deleted project's or runbook's name, a token's name):
// shown once the object itself is gone.
const keptName = (details: Record<string, unknown>): string | null => {
  for (const key of ['name', 'title', 'display_name']) if (typeof details[key] === 'string' && details[key]) return details[key];
  return null;
};

/** The names of the people, credentials and targets `rows` (audit rows of `orgId`) refer to, in their order. */
export async function auditNames(em: EntityManager, orgId: string, rows: AuditRowIds[]): Promise<AuditNames[]> {
  const uuids = (values: (string | null)[]) => [
    ...new Set(values.filter((v): v is string => v !== null && isUuid(v)).map((v) => v.toLowerCase())),
  ];
  const wanted = new Map<AuditTargetKind, string[]>();
  for (const row of rows) {
    if (row.targetId === null) continue;
    const kind = targetKindOf(row.action);
    if (!LOOKUPS[kind] || !(TEXT_IDS.has(kind) || isUuid(row.targetId))) continue;
    wanted.set(kind, [...(wanted.get(kind) ?? []), row.targetId]);
  }
  // Members who acted are looked up with the members who were acted on, and credentials on their own.
  const actorIds = uuids(rows.map((r) => r.actorUserId));
  const tokenIds = uuids(rows.map((r) => r.actorToken));
  const parts: RawBuilder<unknown>[] = [];
  for (const [kind, ids] of wanted) {
    const lookup = LOOKUPS[kind]!(orgId, TEXT_IDS.has(kind) ? [...new Set(ids)] : uuids(ids));
    parts.push(sql`select ${kind}::text as kind, t.id::text as id, t.label, null::text as extra from (${lookup}) t`);
  }
  if (actorIds.length)
    parts.push(sql`select 'actor'::text as kind, u.id::text as id, u.name as label, u.email as extra
                     from memberships m join users u on u.id = m.user_id
                    where m.org_id = ${orgId} and m.user_id = any(${actorIds}::uuid[])`);
  if (tokenIds.length)
    parts.push(sql`select 'credential'::text as kind, id::text as id, name as label, kind as extra
                     from credentials where org_id = ${orgId} and id = any(${tokenIds}::uuid[])`);
  const found = new Map<string, { label: string | null; extra: string | null }>();
  if (parts.length) {
    const union = sql.join(parts, sql` union all `);
    const named = await query(em, sql<{ kind: string; id: string; label: string | null; extra: string | null }>`${union}`);
    for (const n of named) found.set(`${n.kind}:${n.id}`, { label: n.label, extra: n.extra });
  }
  return rows.map((row) => {
    const actor = row.actorUserId ? found.get(`actor:${row.actorUserId}`) : undefined;
    const credential = row.actorToken ? found.get(`credential:${row.actorToken}`) : undefined;
    let target: AuditTarget | null = null;
    if (row.targetId !== null) {
      const kind = targetKindOf(row.action);
      const hit = found.get(`${kind}:${TEXT_IDS.has(kind) ? row.targetId : row.targetId.toLowerCase()}`);
      target = { kind, id: row.targetId, label: hit ? hit.label : keptName(row.details), exists: hit !== undefined };
    }
    return {
      actor: actor ? { id: row.actorUserId!, name: actor.label ?? '', email: actor.extra ?? '' } : null,
      token: credential
        ? { id: row.actorToken!, kind: credential.extra === 'session' ? 'session' : 'api_token', name: credential.label }
        : null,
      target,
    };
  });
}
