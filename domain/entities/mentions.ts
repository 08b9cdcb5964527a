import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../ids.ts';
import { query, queryOne, sql } from '../sql.ts';
import { normalizeEntityName } from './normalize.ts';

export interface Mention {
  name: string;
  type: string;
  aliases?: string[];
}

export interface MentionOutcome {
  entityIds: string[];
  created: number;
  linked: number;
}

interface Names {
  display: string[];
  normalized: string[];
}

interface Resolved {
  key: string;
  type: string;
  // The mention's own name first, then its aliases; distinct by normalized form.
  names: Names;
}

function addName(names: Names, display: string): void {
  const norm = normalizeEntityName(display);
  if (!norm || names.normalized.includes(norm)) return;
  names.display.push(display.trim());
  names.normalized.push(norm);
}

// Mentions of one call that normalize to the same name are one mention with the union of their aliases.
function dedupe(mentions: Mention[]): Resolved[] {
  const byKey = new Map<string, Resolved>();
  for (const m of mentions) {
    const key = normalizeEntityName(m.name);
    if (!key) continue;
    let r = byKey.get(key);
    if (!r) {
      r = { key, type: m.type.trim().toLowerCase() || 'other', names: { display: [], normalized: [] } };
      addName(r.names, m.name);
      byKey.set(key, r);
    }
    for (const alias of m.aliases ?? []) addName(r.names, alias);
  }
  // Name order makes concurrent calls insert new entities in the same order, so they wait instead of deadlocking.
  return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

// An exact name match wins over the mention's name found among aliases, which wins over one of the
// mention's aliases being an entity's name; ties go to the most mentioned entity.
async function findEntity(em: EntityManager, orgId: string, r: Resolved): Promise<string | undefined> {
  const aliases = r.names.normalized.slice(1);
  const row = await queryOne(
    em,
    sql<{ id: string }>`select id from entities
       where org_id = ${orgId}
         and (normalized_name = ${r.key} or normalized_aliases @> array[${r.key}]::text[] or normalized_name = any(${aliases}::text[]))
       order by case when normalized_name = ${r.key} then 0 when normalized_aliases @> array[${r.key}]::text[] then 1 else 2 end,
                mention_count desc, id
       limit 1`,
  );
  return row?.id;
}

// One extraction may write "Acme" with the alias "Acme Corp" while another writes "Acme Corp" as a name:
// each would look for the other's row before it committed, and the org would get two entities for one
// thing. So every name a call is about to look up (names and aliases alike) is locked for the rest of its
// transaction, in sorted order so that calls never wait on each other in a cycle; the later call then finds
// the earlier one's entity. The locks are advisory (no row exists yet to lock) and keyed by org and name.
async function lockNames(em: EntityManager, orgId: string, resolved: Resolved[]): Promise<void> {
  const keys = [...new Set(resolved.flatMap((r) => r.names.normalized))].sort().map((name) => `entity:${orgId}:${name}`);
  if (keys.length === 0) return;
  await query(
    em,
    sql`select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest(${keys}::text[]) with ordinality as u(k, i) order by i`,
  );
}

// Finds or creates the entity of a mention. A concurrent call inserting the same name makes this insert
// wait for it and then do nothing, after which the committed row is found by name.
async function resolveEntity(em: EntityManager, orgId: string, r: Resolved, seenAt: string): Promise<{ id: string; created: boolean }> {
  const found = await findEntity(em, orgId, r);
  if (found) return { id: found, created: false };
  const [display, ...aliases] = r.names.display;
  const inserted = await queryOne(
    em,
    sql<{ id: string }>`insert into entities (id, org_id, display_name, normalized_name, entity_type, aliases, normalized_aliases, metadata,
                                mention_count, first_seen_at, last_seen_at, created_at, updated_at)
       values (${newId()}, ${orgId}, ${display}, ${r.key}, ${r.type}, ${aliases}::text[], ${r.names.normalized.slice(1)}::text[], '{}',
               0, ${seenAt}::timestamptz, ${seenAt}::timestamptz, now(), now())
       on conflict (org_id, normalized_name) do nothing
       returning id`,
  );
  if (inserted) return { id: inserted.id, created: true };
  const winner = await queryOne(em, sql<{ id: string }>`select id from entities where org_id = ${orgId} and normalized_name = ${r.key}`);
  if (!winner) throw new Error(`entity ${r.key} vanished while being created`);
  return { id: winner.id, created: false };
}

// Links the memory to the entity; only a new link counts as a mention and contributes its names as aliases,
// so a retried extraction changes nothing. Names the entity already has (its own or an alias) are skipped.
async function link(em: EntityManager, orgId: string, memoryId: string, entityId: string, names: Names, seenAt: string): Promise<boolean> {
  const row = await queryOne(
    em,
    sql<{ id: string }>`with link as (
         insert into memory_entities (entity_id, memory_id, org_id, linked_via, created_at)
         values (${entityId}, ${memoryId}, ${orgId}, 'extraction', now())
         on conflict do nothing
         returning entity_id),
       names as (select display, norm, ord from unnest(${names.display}::text[],
         ${names.normalized}::text[]) with ordinality as n(display, norm, ord))
       update entities e set
         mention_count = e.mention_count + 1,
         first_seen_at = least(e.first_seen_at, ${seenAt}::timestamptz),
         last_seen_at = greatest(e.last_seen_at, ${seenAt}::timestamptz),
         aliases = e.aliases || coalesce((select array_agg(display order by ord) from names
         where norm <> e.normalized_name and not norm = any(e.normalized_aliases)), '{}'),
         normalized_aliases = e.normalized_aliases || coalesce((select array_agg(norm order by ord) from names
         where norm <> e.normalized_name and not norm = any(e.normalized_aliases)), '{}'),
         updated_at = now()
        from link
       where e.org_id = ${orgId} and e.id = link.entity_id
       returning e.id`,
  );
  return row !== undefined;
}

const merge = (into: Names, from: Names): void => from.display.forEach((d) => addName(into, d));

// Records the entities an extraction found in a memory. Idempotent per memory: running it again for the
// same memory and mentions changes nothing. A memory that is gone (or another org's) records nothing.
export async function recordMentions(
  em: EntityManager,
  orgId: string,
  memoryId: string,
  mentions: Mention[],
  seenAt: Date,
): Promise<MentionOutcome> {
  const seen = seenAt.toISOString();
  return em.transactional(async (tx) => {
    // Holds off a concurrent delete of the memory until the links are in.
    const memory = await queryOne(
      tx,
      sql<{ id: string }>`select id from memories where id = ${memoryId} and org_id = ${orgId} for key share`,
    );
    if (!memory) return { entityIds: [], created: 0, linked: 0 };
    const resolved = dedupe(mentions);
    await lockNames(tx, orgId, resolved);
    const entities = new Map<string, Names>();
    let created = 0;
    for (const r of resolved) {
      const entity = await resolveEntity(tx, orgId, r, seen);
      if (entity.created) created++;
      const names = entities.get(entity.id);
      if (names) merge(names, r.names);
      else entities.set(entity.id, { display: [...r.names.display], normalized: [...r.names.normalized] });
    }
    let linked = 0;
    // Id order, so two calls updating the same entities lock them in the same order.
    for (const id of [...entities.keys()].sort()) {
      if (await link(tx, orgId, memoryId, id, entities.get(id)!, seen)) linked++;
    }
    return { entityIds: [...entities.keys()], created, linked };
  });
}

// Removes the links an extraction made for a memory, before it is extracted again after a content change.
export async function unlinkExtraction(em: EntityManager, orgId: string, memoryId: string): Promise<{ unlinked: number }> {
  return em.transactional(async (tx) => {
    const links = await query(
      tx,
      sql<{ entity_id: string }>`select entity_id from memory_entities
         where memory_id = ${memoryId} and org_id = ${orgId} and linked_via = 'extraction'`,
    );
    if (links.length === 0) return { unlinked: 0 };
    const ids = links.map((l) => l.entity_id);
    await query(tx, sql`select id from entities where org_id = ${orgId} and id = any(${ids}::uuid[]) order by id for no key update`);
    const gone = await query(
      tx,
      sql<{ entity_id: string }>`delete from memory_entities
         where org_id = ${orgId} and memory_id = ${memoryId} and entity_id = any(${ids}::uuid[]) and linked_via = 'extraction'
         returning entity_id`,
    );
    await query(
      tx,
      sql`update entities set mention_count = greatest(mention_count - 1, 0), updated_at = now()
           where org_id = ${orgId} and id = any(${gone.map((g) => g.entity_id)}::uuid[])`,
    );
    return { unlinked: gone.length };
  });
}
