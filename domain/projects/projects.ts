import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { requireRole } from '../accounts/roles.ts';
import { recordAudit } from '../audit/record.ts';
import { conflict, notFound } from '../errors.ts';
import { patchObject } from '../metadata.ts';
import { NAMESPACE_COUNTERS } from '../store/counters.ts';
import { MAX_PROJECTS_PER_ORG } from '../store/namespaces.ts';
import { query, queryOne, sql, toDate, toDateOrNull } from '../sql.ts';
import { isUniqueViolation } from '../unique-violation.ts';

export interface ProjectView {
  id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  memoryCount: number;
  archivedAt: number | null;
  createdAt: number;
  updatedAt: number;
  lastActivityAt: number;
}

interface ProjectRow {
  id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  memory_count: string;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
  last_activity_at: string;
}

// Recent activity is the latest of the project's own update and its newest memory write.
async function projects(em: EntityManager, orgId: string, page: { id?: string; limit?: number; offset?: number }): Promise<ProjectView[]> {
  const { id, limit = MAX_PROJECTS_PER_ORG, offset = 0 } = page;
  const rows = await query(
    em,
    sql<ProjectRow>`select n.id, n.name, n.description, n.metadata, n.archived_at, n.created_at, n.updated_at,
          coalesce((select sum(value) from counters c
          where c.org_id = n.org_id and c.scope_id = n.id and c.name = ${NAMESPACE_COUNTERS.live}), 0) as memory_count,
          greatest(n.updated_at, (select m.updated_at from memories m where m.org_id = n.org_id and m.namespace_id = n.id
          order by m.updated_at desc limit 1)) as last_activity_at
        from namespaces n
       where n.org_id = ${orgId} ${id ? sql`and n.id = ${id}` : sql``}
       order by last_activity_at desc, n.id
       limit ${limit} offset ${offset}`,
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    metadata: r.metadata,
    memoryCount: Number(r.memory_count),
    archivedAt: toDateOrNull(r.archived_at)?.getTime() ?? null,
    createdAt: toDate(r.created_at).getTime(),
    updatedAt: toDate(r.updated_at).getTime(),
    lastActivityAt: toDate(r.last_activity_at).getTime(),
  }));
}

export const listProjects = (em: EntityManager, orgId: string, page: { limit: number; offset: number }): Promise<ProjectView[]> =>
  projects(em, orgId, page);

export async function getProject(em: EntityManager, orgId: string, id: string): Promise<ProjectView> {
  const [project] = await projects(em, orgId, { id });
  if (!project) throw notFound('project', id);
  return project;
}

export interface ProjectPatch {
  name?: string | undefined;
  description?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
  archived?: boolean | undefined;
}

export async function updateProject(em: EntityManager, caller: Caller, id: string, patch: ProjectPatch): Promise<ProjectView> {
  try {
    await em.transactional(async (tx) => {
      const project = await queryOne(
        tx,
        sql<{ metadata: Record<string, unknown>; archived_at: string | null }>`select metadata, archived_at from namespaces
          where org_id = ${caller.orgId} and id = ${id}`,
      );
      if (!project) throw notFound('project', id);
      requireRole(caller, 'admin');
      const now = sql`${new Date().toISOString()}::timestamptz`;
      const sets = [sql`updated_at = ${now}`];
      if (patch.name !== undefined) sets.push(sql`name = ${patch.name}`);
      if (patch.description !== undefined) sets.push(sql`description = ${patch.description}`);
      if (patch.metadata !== undefined) sets.push(sql`metadata = ${JSON.stringify(patchObject(project.metadata, patch.metadata))}::jsonb`);
      // Archiving stamps the time once; unarchiving clears it.
      if (patch.archived === true && project.archived_at === null) sets.push(sql`archived_at = ${now}`);
      if (patch.archived === false) sets.push(sql`archived_at = null`);
      await query(tx, sql`update namespaces set ${sql.join(sets)} where org_id = ${caller.orgId} and id = ${id}`);
      await recordAudit(tx, {
        orgId: caller.orgId,
        action: 'project.update',
        targetId: id,
        actor: actorOf(caller),
        details: { fields: Object.keys(patch) },
      });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('project_name_taken', 'another project of this org has that name');
    throw err;
  }
  return getProject(em.fork(), caller.orgId, id);
}
