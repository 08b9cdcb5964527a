import type { EntityManager } from '@mikro-orm/postgresql';
import { conflict } from '../errors.ts';
import { newId } from '../ids.ts';
import { query, queryOne, sql } from '../sql.ts';

export const DEFAULT_NAMESPACE = 'default';
// Projects an org may hold, so that listing them (ordered by activity, computed per project) stays bounded.
export const MAX_PROJECTS_PER_ORG = 10_000;

export async function namespaceIdOf(em: EntityManager, orgId: string, name: string): Promise<string | null> {
  const row = await queryOne(em, sql<{ id: string }>`select id from namespaces where org_id = ${orgId} and name = ${name}`);
  return row?.id ?? null;
}

// A namespace is created the first time a memory names it; concurrent first uses agree on one row.
// Writers hold the row with FOR KEY SHARE until they commit, and a project's deletion takes FOR UPDATE, so a
// memory written while its project is deleted either commits first (and is deleted with the project) or
// waits, finds the namespace gone (a locking read skips a row deleted meanwhile) and creates it anew: never
// a memory in a namespace that no longer exists. Call inside a transaction, or the lock ends at once.
export async function ensureNamespace(em: EntityManager, orgId: string, name: string): Promise<string> {
  return (await ensureNamespaces(em, [{ orgId, name }])).get(namespaceKey(orgId, name))!;
}

export const namespaceKey = (orgId: string, name: string): string => `${orgId}/${name}`;

// Every namespace a batch of writes names, locked (or created) in one statement, by `namespaceKey`.
export async function ensureNamespaces(em: EntityManager, wanted: { orgId: string; name: string }[]): Promise<Map<string, string>> {
  // Sorted, so that two batches creating namespaces take the orgs' project locks in the same order.
  const keys = [...new Map(wanted.map((w) => [namespaceKey(w.orgId, w.name), w])).entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([, w]) => w);
  const rows = await query(
    em,
    sql<{ id: string; org_id: string; name: string }>`select n.id, n.org_id, n.name from namespaces n
      join unnest(${keys.map((k) => k.orgId)}::uuid[], ${keys.map((k) => k.name)}::text[]) as w(org_id, name) on n.org_id = w.org_id
        and n.name = w.name
      order by n.id for key share of n`,
  );
  const found = new Map(rows.map((r) => [namespaceKey(r.org_id, r.name), r.id]));
  for (const k of keys) {
    if (found.has(namespaceKey(k.orgId, k.name))) continue;
    await checkProjectLimit(em, k.orgId);
    const row = await queryOne(
      em,
      // `do update` (not `do nothing`) so that a row committed by a racing first use is returned too; it
      // sets a column outside every unique key so the row lock taken is the weaker NO KEY UPDATE.
      sql<{ id: string }>`insert into namespaces (id, org_id, name, metadata, created_at, updated_at)
          values (${newId()}, ${k.orgId}, ${k.name}, '{}', now(), now())
          on conflict (org_id, name) do update set updated_at = namespaces.updated_at returning id`,
    );
    found.set(namespaceKey(k.orgId, k.name), row!.id);
  }
  return found;
}

// Only a first use counts, under an org-wide lock so that racing first uses cannot pass the cap together.
async function checkProjectLimit(em: EntityManager, orgId: string): Promise<void> {
  await query(em, sql`select pg_advisory_xact_lock(hashtextextended(${`projects:${orgId}`}, 0))`);
  const row = await queryOne(em, sql<{ n: number }>`select count(*)::int as n from namespaces where org_id = ${orgId}`);
  if (row!.n >= MAX_PROJECTS_PER_ORG) {
    throw conflict('project_limit', `at most ${MAX_PROJECTS_PER_ORG} projects per org: delete unused ones first`);
  }
}
