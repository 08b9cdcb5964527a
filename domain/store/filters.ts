import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { sql } from '../sql.ts';
import { invalid } from '../errors.ts';
import { compileExpression, type FilterExpression } from './filter-expression.ts';
import { namespaceIdOf } from './namespaces.ts';

// The filters shared by list, search and export, applied to `memories m`.
export interface MemoryFilters {
  namespace?: string | undefined;
  createdAfter?: number | undefined;
  createdBefore?: number | undefined;
  updatedAfter?: number | undefined;
  updatedBefore?: number | undefined;
  // Event time (occurred_at; a memory saved before it was kept stands at its created_at).
  occurredAfter?: number | undefined;
  occurredBefore?: number | undefined;
  metadataFilter?: Record<string, unknown> | undefined;
  tags?: string[] | undefined;
  // Only memories linked to this entity of the org.
  entity?: string | undefined;
  // Memories merged away by consolidation are left out unless asked for.
  includeSuperseded?: boolean | undefined;
  // The general grammar (filter-expression.ts), as the caller wrote it: AND-ed with the fields above.
  expression?: FilterExpression | undefined;
  // Only the memories of this end user, agent or run (each an exact match).
  userId?: string | undefined;
  agentId?: string | undefined;
  runId?: string | undefined;
}

export interface CompiledFilters {
  // False when the filter cannot match anything (an unknown namespace).
  satisfiable: boolean;
  where: RawBuilder<unknown>;
  // True when only the org (and maybe the namespace) restricts the rows.
  trivial: boolean;
  namespaceId: string | null;
  // When the filter names an end user, agent or run: the filter's namespace and scopes as a condition on a folded
  // document (lexical_docs `d`, which records them: migration 0027), whose partial indexes list one scope's
  // documents without reading the org's. The documents passing it are a superset of the memories passing the
  // filter, and exactly them (superseded memories have no document) when `exact`.
  documents: { where: RawBuilder<unknown>; exact: boolean } | null;
}

const ts = (ms: number) => new Date(ms).toISOString();

// True for a row of another org-scoped table (`alias`, with org_id and memory_id) whose memory passes the
// filters. OFFSET 0 keeps PostgreSQL from flattening the subquery into a join, so each row probes memories'
// primary key. Flattened, the plan follows the statistics, and an org they do not know yet (created since the
// last ANALYZE, estimated at one row) got a join that read all the org's memories again for each row.
export const memoryPasses = (compiled: CompiledFilters, alias: string): RawBuilder<unknown> =>
  sql`exists (select 1 from memories m where m.org_id = ${sql.ref(`${alias}.org_id`)} and m.id = ${sql.ref(`${alias}.memory_id`)}
      and ${compiled.where} offset 0)`;

export async function compileFilters(em: EntityManager, orgId: string, f: MemoryFilters): Promise<CompiledFilters> {
  const parts: RawBuilder<unknown>[] = [sql`m.org_id = ${orgId}`];
  let namespaceId: string | null = null;
  if (f.namespace !== undefined) {
    namespaceId = await namespaceIdOf(em, orgId, f.namespace);
    if (!namespaceId) return { satisfiable: false, where: sql`false`, trivial: true, namespaceId: null, documents: null };
    parts.push(sql`m.namespace_id = ${namespaceId}`);
  }
  // The counters behind trivial totals count only memories that are not superseded, as the default does.
  if (!f.includeSuperseded) parts.push(sql`m.superseded_by is null`);
  let trivial = !f.includeSuperseded;
  const add = (part: RawBuilder<unknown>) => {
    parts.push(part);
    trivial = false;
  };
  if (f.createdAfter !== undefined) add(sql`m.created_at >= ${ts(f.createdAfter)}::timestamptz`);
  if (f.createdBefore !== undefined) add(sql`m.created_at <= ${ts(f.createdBefore)}::timestamptz`);
  if (f.updatedAfter !== undefined) add(sql`m.updated_at >= ${ts(f.updatedAfter)}::timestamptz`);
  if (f.updatedBefore !== undefined) add(sql`m.updated_at <= ${ts(f.updatedBefore)}::timestamptz`);
  if (f.occurredAfter !== undefined) add(sql`coalesce(m.occurred_at, m.created_at) >= ${ts(f.occurredAfter)}::timestamptz`);
  if (f.occurredBefore !== undefined) add(sql`coalesce(m.occurred_at, m.created_at) <= ${ts(f.occurredBefore)}::timestamptz`);
  if (f.metadataFilter !== undefined && Object.keys(f.metadataFilter).length > 0)
    add(sql`m.metadata @> ${JSON.stringify(f.metadataFilter)}::jsonb`);
  if (f.tags !== undefined && f.tags.length > 0) add(sql`m.tags @> ${f.tags}::text[]`);
  // The scopes, on the memory and on its document.
  const scopes = { user_id: f.userId, agent_id: f.agentId, run_id: f.runId };
  const named = Object.entries(scopes).filter((s): s is [string, string] => s[1] !== undefined);
  for (const [column, value] of named) add(sql`${sql.ref(`m.${column}`)} = ${value}`);
  if (f.expression !== undefined) {
    const expression = compileExpression(f.expression);
    if (expression.issues.length > 0)
      throw invalid('validation_failed', expression.issues.map((i) => `filters.${i.path.join('.')}: ${i.message}`).join('; '));
    if (expression.where) add(expression.where);
  }
  if (f.entity !== undefined)
    add(sql`exists (select 1 from memory_entities me where me.entity_id = ${f.entity} and me.memory_id = m.id and me.org_id = ${orgId})`);
  const documentParts = [sql`d.org_id = ${orgId}`, ...(namespaceId ? [sql`d.namespace_id = ${namespaceId}`] : [])];
  for (const [column, value] of named) documentParts.push(sql`${sql.ref(`d.${column}`)} = ${value}`);
  const documents =
    named.length > 0
      ? { where: sql.join(documentParts, sql` and `), exact: !f.includeSuperseded && parts.length === documentParts.length + 1 }
      : null;
  return { satisfiable: true, where: sql.join(parts, sql` and `), trivial, namespaceId, documents };
}
