import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { patchObject } from '../metadata.ts';
import { escapeLike, query, queryOne, sql, toDate } from '../sql.ts';
import { isUniqueViolation } from '../unique-violation.ts';
import { normalizeEntityName } from './normalize.ts';

export const ENTITY_MEMORY_LIMIT = 100;

export interface EntityMemoryView {
  id: string;
  content: string;
  namespace: string;
  createdAt: number;
  linkedVia: string;
}

export interface EntityView {
  id: string;
  displayName: string;
  entityType: string;
  aliases: string[];
  mentionCount: number;
  firstSeenAt: number;
  lastSeenAt: number;
  metadata: Record<string, unknown>;
  memories?: EntityMemoryView[];
}

interface EntityRow {
  id: string;
  display_name: string;
  entity_type: string;
  aliases: string[];
  mention_count: number;
  first_seen_at: string;
  last_seen_at: string;
  metadata: Record<string, unknown>;
}

const COLUMNS = sql`id, display_name, entity_type, aliases, mention_count, first_seen_at, last_seen_at, metadata`;

const view = (r: EntityRow): EntityView => ({
  id: r.id,
  displayName: r.display_name,
  entityType: r.entity_type,
  aliases: r.aliases,
  mentionCount: r.mention_count,
  firstSeenAt: toDate(r.first_seen_at).getTime(),
  lastSeenAt: toDate(r.last_seen_at).getTime(),
  metadata: r.metadata,
});

export interface EntityListQuery {
  q?: string | undefined;
  entityType?: string | undefined;
  limit: number;
  offset: number;
}

// Most mentioned first, then most recently seen.
export async function listEntities(em: EntityManager, orgId: string, q: EntityListQuery): Promise<EntityView[]> {
  const pattern = q.q ? `%${escapeLike(q.q)}%` : null;
  const rows = await query(
    em,
    sql<EntityRow>`select ${COLUMNS} from entities e
       where org_id = ${orgId}
         ${pattern ? sql`and (e.display_name ilike ${pattern} or exists (select 1 from unnest(e.aliases) a where a ilike ${pattern}))` : sql``}
         ${q.entityType ? sql`and e.entity_type = ${q.entityType.trim().toLowerCase()}` : sql``}
       order by e.mention_count desc, e.last_seen_at desc, e.id
       limit ${q.limit} offset ${q.offset}`,
  );
  return rows.map(view);
}

async function entityMemories(em: EntityManager, orgId: string, entityId: string): Promise<EntityMemoryView[]> {
  const rows = await query(
    em,
    sql<{ id: string; content: string; namespace: string; created_at: string; linked_via: string }>`
      select m.id, m.content, n.name as namespace, m.created_at, me.linked_via
        from memory_entities me
        -- Each memory by its key, whatever the statistics know of the org (OFFSET 0: see memoryPasses).
        cross join lateral (select m.id, m.content, m.namespace_id, m.created_at from memories m
        where m.org_id = me.org_id and m.id = me.memory_id offset 0) m
        join namespaces n on n.org_id = me.org_id and n.id = m.namespace_id
       where me.org_id = ${orgId} and me.entity_id = ${entityId}
       order by m.created_at desc, m.id desc
       limit ${ENTITY_MEMORY_LIMIT}`,
  );
  return rows.map((r) => ({
    id: r.id,
    content: r.content,
    namespace: r.namespace,
    createdAt: toDate(r.created_at).getTime(),
    linkedVia: r.linked_via,
  }));
}

export async function getEntity(em: EntityManager, orgId: string, id: string, includeMemories = false): Promise<EntityView> {
  const row = await queryOne(em, sql<EntityRow>`select ${COLUMNS} from entities where id = ${id} and org_id = ${orgId}`);
  if (!row) throw notFound('entity', id);
  const entity = view(row);
  if (includeMemories) entity.memories = await entityMemories(em, orgId, id);
  return entity;
}

export interface EntityPatch {
  displayName?: string | undefined;
  entityType?: string | undefined;
  aliases?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
}

// Aliases distinct by normalized form (first spelling wins), so aliases and normalized_aliases stay parallel.
function aliasPair(aliases: string[]): { aliases: string[]; normalized: string[] } {
  const out = { aliases: [] as string[], normalized: [] as string[] };
  for (const alias of aliases) {
    const norm = normalizeEntityName(alias);
    if (!norm || out.normalized.includes(norm)) continue;
    out.aliases.push(alias.trim());
    out.normalized.push(norm);
  }
  return out;
}

// Audit details name the fields as the API does.
const AUDIT_FIELDS: Record<keyof EntityPatch, string> = {
  displayName: 'display_name',
  entityType: 'entity_type',
  aliases: 'aliases',
  metadata: 'metadata',
};

export async function updateEntity(em: EntityManager, caller: Caller, id: string, patch: EntityPatch): Promise<EntityView> {
  const normalizedName = patch.displayName === undefined ? undefined : normalizeEntityName(patch.displayName);
  if (normalizedName === '') throw invalid('invalid_display_name', 'display_name needs at least one letter or digit');
  try {
    return await em.transactional(async (tx) => {
      const current = await queryOne(
        tx,
        sql<{ metadata: Record<string, unknown> }>`select metadata from entities where id = ${id} and org_id = ${caller.orgId} for update`,
      );
      if (!current) throw notFound('entity', id);
      const aliases = patch.aliases === undefined ? undefined : aliasPair(patch.aliases);
      const row = await queryOne(
        tx,
        sql<EntityRow>`update entities set
             display_name = coalesce(${patch.displayName?.trim() ?? null}, display_name),
             normalized_name = coalesce(${normalizedName ?? null}, normalized_name),
             entity_type = coalesce(${patch.entityType?.trim().toLowerCase() ?? null}, entity_type),
             aliases = coalesce(${aliases?.aliases ?? null}::text[], aliases),
             normalized_aliases = coalesce(${aliases?.normalized ?? null}::text[], normalized_aliases),
             metadata =
               ${JSON.stringify(patch.metadata === undefined ? current.metadata : patchObject(current.metadata, patch.metadata))}::jsonb,
             updated_at = now()
           where org_id = ${caller.orgId} and id = ${id}
           returning ${COLUMNS}`,
      );
      const fields = Object.entries(AUDIT_FIELDS).flatMap(([key, field]) => (patch[key as keyof EntityPatch] === undefined ? [] : [field]));
      await recordAudit(tx, { orgId: caller.orgId, action: 'entity.update', targetId: id, actor: actorOf(caller), details: { fields } });
      return view(row!);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('entity_name_taken', 'another entity of this org has that name');
    throw err;
  }
}

// Removes the entity and its links; the memories stay.
export async function deleteEntity(em: EntityManager, caller: Caller, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const entity = await queryOne(
      tx,
      sql<{ display_name: string }>`select display_name from entities where id = ${id} and org_id = ${caller.orgId} for update`,
    );
    if (!entity) throw notFound('entity', id);
    const links = await query(
      tx,
      sql<{ memory_id: string }>`delete from memory_entities where org_id = ${caller.orgId} and entity_id = ${id} returning memory_id`,
    );
    await query(tx, sql`delete from entities where org_id = ${caller.orgId} and id = ${id}`);
    await recordAudit(tx, {
      orgId: caller.orgId,
      action: 'entity.delete',
      targetId: id,
      actor: actorOf(caller),
      details: { display_name: entity.display_name, unlinked: links.length },
    });
  });
}
