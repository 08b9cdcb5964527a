import { z } from 'zod';
import { sql, toDate } from '../sql.ts';
import { epochMs, wireOf } from '../wire.ts';

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

// What each scope names, for the API's fields and the memory's shape alike.
export const SCOPE_DOC = {
  user_id: 'the end user this memory is about (an id of your platform)',
  agent_id: 'the agent that keeps this memory',
  run_id: 'the run, session or conversation it comes from',
};

// The memory as the API, webhooks and exports show it (snake_case, epoch ms); a scope not set is left out.
export const memorySchema = z
  .object({
    id: z.uuid(),
    content: z.string(),
    namespace: z.string(),
    tags: z.array(z.string()),
    source: z.string(),
    source_ref: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    created_at: epochMs,
    updated_at: epochMs,
    occurred_at: epochMs.meta({
      description: 'when what the memory tells happened (event time), epoch ms: set by the caller, else the time it was saved',
    }),
    user_id: z
      .string()
      .optional()
      .meta({ description: `${SCOPE_DOC.user_id}; absent when not set` }),
    agent_id: z
      .string()
      .optional()
      .meta({ description: `${SCOPE_DOC.agent_id}; absent when not set` }),
    run_id: z
      .string()
      .optional()
      .meta({ description: `${SCOPE_DOC.run_id}; absent when not set` }),
    superseded_by: z
      .uuid()
      .optional()
      .meta({
        description:
          'present once a consolidation merge replaced this memory: the id of the merged memory. Superseded memories are left out ' +
          'of search (but for a search as_of a time before) and, unless include_superseded is set, of lists and exports.',
      }),
  })
  .meta({ id: 'Memory' });

export const memoryRecord = wireOf(memorySchema);

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
