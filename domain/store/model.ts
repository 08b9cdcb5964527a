import { sql, toDate } from '../sql.ts';

export type Metadata = Record<string, unknown>;

// Who and what a memory is about (the field's user_id, agent_id, run_id); null when not said.
export interface Scopes {
  userId: string | null;
  agentId: string | null;
  runId: string | null;
}

export const NO_SCOPES: Scopes = { userId: null, agentId: null, runId: null };

// A memory as the domain hands it out; timestamps are epoch milliseconds, as in the API.
export interface MemoryView extends Scopes {
  id: string;
  content: string;
  namespace: string;
  tags: string[];
  source: string;
  sourceRef: string | null;
  metadata: Metadata;
  createdAt: number;
  updatedAt: number;
  // When what it tells happened (event time): the caller's, or createdAt.
  occurredAt: number;
  score?: number;
  // Set once consolidation merged this memory into another.
  supersededBy?: string;
}

export interface MemoryRow {
  id: string;
  content: string;
  namespace: string;
  tags: string[];
  source: string;
  source_ref: string | null;
  metadata: Metadata;
  created_at: string | Date;
  updated_at: string | Date;
  // Null for a memory saved before event time was kept: it stands at created_at.
  occurred_at: string | Date | null;
  score?: number | string;
  superseded_by: string | null;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
}

// A memory with its namespace, joined by org and id (the namespaces' key, 0013_tenant_keys).
export const MEMORIES_IN_NAMESPACES = sql`memories m join namespaces n on n.org_id = m.org_id and n.id = m.namespace_id`;

// Selected from MEMORIES_IN_NAMESPACES.
export const MEMORY_COLUMNS = sql`m.id, m.content, n.name as namespace, m.tags, m.source, m.source_ref, m.metadata,
  m.created_at, m.updated_at, m.occurred_at, m.superseded_by,
  m.user_id, m.agent_id, m.run_id`;

// The memory row as the API, webhooks and exports show it (snake_case, epoch ms); a scope not set is left out.
export function memoryRecord(m: MemoryView) {
  return {
    ...(m.userId !== null ? { user_id: m.userId } : {}),
    ...(m.agentId !== null ? { agent_id: m.agentId } : {}),
    ...(m.runId !== null ? { run_id: m.runId } : {}),
    id: m.id,
    content: m.content,
    namespace: m.namespace,
    tags: m.tags,
    source: m.source,
    source_ref: m.sourceRef,
    metadata: m.metadata,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    occurred_at: m.occurredAt,
    ...(m.supersededBy ? { superseded_by: m.supersededBy } : {}),
  };
}

export function memoryView(row: MemoryRow): MemoryView {
  const view: MemoryView = {
    id: row.id,
    content: row.content,
    namespace: row.namespace,
    tags: row.tags,
    source: row.source,
    sourceRef: row.source_ref,
    metadata: row.metadata,
    createdAt: toDate(row.created_at).getTime(),
    updatedAt: toDate(row.updated_at).getTime(),
    occurredAt: toDate(row.occurred_at ?? row.created_at).getTime(),
    userId: row.user_id,
    agentId: row.agent_id,
    runId: row.run_id,
  };
  if (row.score !== undefined) view.score = Number(row.score);
  if (row.superseded_by) view.supersededBy = row.superseded_by;
  return view;
}
