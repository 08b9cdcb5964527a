import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  BATCH_CREATE_MAX,
  BATCH_UPDATE_MAX,
  BULK_SEARCH_MAX_QUERIES,
  LIST_LIMIT_MAX,
  LIST_OFFSET_MAX,
  SEARCH_K_MAX,
} from '../../domain/memories/limits.ts';
import { LIST_ORDERS } from '../../domain/memories/orders.ts';
import { AS_OF_SCAN_MAX } from '../../domain/search/as-of.ts';
import { SEARCH_MODES } from '../../domain/search/modes.ts';
import { RECOMMENDED_FLOOR } from '../../domain/search/relevance.ts';
import { invalid } from '../../domain/errors.ts';
import type { NewMemory } from '../../domain/memories/create.ts';
import type { MemoryPatch } from '../../domain/memories/update.ts';
import type { AppContext } from '../http/state.ts';
import { epochMsFilter, epochMsParam, intParam, jsonObjectParam, patchGuard, repeatedParam } from '../http/schemas.ts';
import {
  filterExpressionParam,
  filterFields,
  metadata,
  namespaceName,
  occurredAt,
  scopeFields,
  scopePatchFields,
  tags,
} from './schemas.ts';

// The bodies and queries of the memory routes (routes.ts, batch.ts, search.ts), shared with the MCP tools.

export const idParams = z.object({ id: z.uuid() });

// `content required` is for a content that is missing, and only for that (a number is `validation_failed`): the issue's
// message, set here, tells the two apart. A blank content is refused by the domain, with the same code.
const CONTENT_MISSING = 'required: the text of the memory';
const content = z.string({ error: (issue) => (issue.input === undefined || issue.input === null ? CONTENT_MISSING : undefined) });

export const createBody = z.object({
  content,
  namespace: namespaceName.optional(),
  tags: tags.optional(),
  source: z.string().trim().min(1).max(100).optional(),
  source_ref: z.string().max(500).nullable().optional(),
  metadata: metadata.optional(),
  occurred_at: occurredAt.optional(),
  ...scopeFields,
});

const patchFields = {
  content: z.string().optional(),
  tags: tags.optional(),
  namespace: namespaceName.optional(),
  metadata: metadata.optional().meta({ description: 'merged into the stored metadata; a key set to null is removed' }),
  occurred_at: occurredAt.optional(),
  ...scopePatchFields,
};
export const patchBody = z.object(patchFields);
export const batchItem = z.object({ id: z.uuid(), ...patchFields });
export const patchable = patchGuard(patchFields);

export const listBody = z.object({
  ...filterFields,
  limit: z.number().int().min(1).max(LIST_LIMIT_MAX).default(50),
  offset: z.number().int().min(0).max(LIST_OFFSET_MAX).default(0),
  order: z.enum(LIST_ORDERS).default('updated_desc'),
});

// The scope filters as query parameters.
const scopeParams = { user_id: filterFields.user_id, agent_id: filterFields.agent_id, run_id: filterFields.run_id };

// tags=a&tags=b: the memory must carry all of them, as the body's `tags` asks elsewhere.
const tagsParam = repeatedParam(tags)
  .optional()
  .meta({ description: 'the memory must carry all of these tags (repeat the parameter: tags=a&tags=b)' });

export const legacyQuery = z.object({
  q: z.string().trim().min(1).max(4000).optional().meta({ description: 'full-text BM25 query; rows then carry score, best first' }),
  namespace: namespaceName.optional(),
  limit: intParam(1, LIST_LIMIT_MAX).default(50),
  offset: intParam(0, LIST_OFFSET_MAX).default(0),
  created_after: epochMsParam.optional(),
  created_before: epochMsParam.optional(),
  updated_after: epochMsParam.optional(),
  updated_before: epochMsParam.optional(),
  occurred_after: epochMsParam.optional(),
  occurred_before: epochMsParam.optional(),
  metadata_filter: jsonObjectParam.optional(),
  filters: filterExpressionParam.optional(),
  tags: tagsParam,
  entity: z.uuid().optional(),
  order: z.enum(LIST_ORDERS).default('updated_desc'),
  ...scopeParams,
});

export const similarQuery = z.object({
  k: intParam(1, SEARCH_K_MAX).default(10),
  namespace: namespaceName.optional(),
  tags: tagsParam,
  created_after: epochMsParam.optional(),
  created_before: epochMsParam.optional(),
  occurred_after: epochMsParam.optional(),
  occurred_before: epochMsParam.optional(),
  metadata_filter: jsonObjectParam.optional(),
  filters: filterExpressionParam.optional(),
  ...scopeParams,
});

// The search routes' bodies: one query, or up to 25 at once.
const searchFilters = {
  namespace: filterFields.namespace,
  tags: filterFields.tags,
  metadata_filter: filterFields.metadata_filter,
  created_after: filterFields.created_after,
  created_before: filterFields.created_before,
  occurred_after: filterFields.occurred_after,
  occurred_before: filterFields.occurred_before,
  filters: filterFields.filters,
  user_id: filterFields.user_id,
  agent_id: filterFields.agent_id,
  run_id: filterFields.run_id,
};
const searchMode = z.enum(SEARCH_MODES).default('lexical').meta({
  description:
    'lexical: BM25 over the words (the default); semantic: cosine similarity of embeddings, for questions in other words than the memory (a memory over 2,000 characters is also embedded in passages of about 900, up to about 86,000 characters, and scored by its best; with a local model, a question over 128 tokens, about 100 words, is embedded from its first and last 64); hybrid: both lists (100 deep each) fused by relative score: each list scaled to [0, 1] between its worst and best score, then summed with weights 0.4 (words) and 0.6 (meaning) (a list that missed a memory adds 0); its lexical list leaves out the words that only make a question (what, when, who, how, did, does, ...), reads a long question by its 32 rarest terms and, in a namespace, takes the BM25 statistics of that namespace rather than of the whole org (for a namespace of at most about 115 √N of the N memories of the org, e.g. 36,000 of 100,000 or 115,000 of 1,000,000; a larger one keeps the statistics of the org); in a thread (metadata.parent_ref), the two chunks after a memory of that list gain 0.2 and 0.1 of its score. Every filter applies in every mode.',
});
const answerOptions = {
  min_relevance: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .meta({
      description: `leave out hits whose relevance is below this (0-1, the same scale in every mode); ${RECOMMENDED_FLOOR} is the recommended floor for "nothing relevant". Unset, every hit is kept.`,
    }),
  reference_time: epochMsFilter.optional().meta({
    description:
      'epoch ms: the "now" that time words in the query are read against ("last week", "in June", "on May 3"); ' +
      'default as_of when set, else the time of the request',
  }),
  as_of: epochMsFilter.optional().meta({
    description: [
      'epoch ms: search what the scope held at that time: the memories saved by then, whose event time (occurred_at) is by then,',
      'and not superseded by then (one merged or replaced since is found, with its superseded_by). Deleted memories are gone from',
      'every time; an edited memory is searched by its text now. Every mode and filter applies; time words are read against it',
      'unless reference_time is set. The memories alive then that the filters pass are read one by one, at most',
      AS_OF_SCAN_MAX.toLocaleString('en'),
      '(else 400 `as_of_too_broad`: narrow the filters). The answer echoes as_of',
    ].join(' '),
  }),
  resolve_time: z.boolean().default(true).meta({
    description:
      'read time words in the query (English: dates, months, years, "yesterday", "last week", "4 years ago") as a window of event time (occurred_at): the memories in it rank first, the others after them; false searches them as words only',
  }),
  explain: z.boolean().default(false).meta({
    description:
      "add to each hit its place and raw score in each list, the fused score and the inputs of its relevance, and to the answer the query's terms and the filters applied",
  }),
};
export const searchBody = z.object({
  query: z.string().trim().min(1).max(4000),
  k: z.number().int().min(1).max(SEARCH_K_MAX).default(10),
  mode: searchMode,
  ...searchFilters,
  ...answerOptions,
});
export const bulkBody = z.object({
  queries: z.array(z.string().trim().min(1).max(4000)).min(1).max(BULK_SEARCH_MAX_QUERIES),
  k: z.number().int().min(1).max(SEARCH_K_MAX).default(5),
  mode: searchMode,
  ...searchFilters,
  ...answerOptions,
});

export const contentRequired = (issues: z.core.$ZodIssue[]): 'content required' | undefined =>
  issues.some((i) => i.path.length === 1 && i.path[0] === 'content' && i.message === CONTENT_MISSING) ? 'content required' : undefined;
const requestHash = (body: unknown) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

export const batchCreateBody = z.object({
  memories: z
    .array(z.record(z.string(), z.unknown()).meta({ description: 'shaped like the body of POST /api/memories' }))
    .min(1)
    .max(BATCH_CREATE_MAX),
});
export const batchUpdateBody = z.object({ updates: z.array(z.record(z.string(), z.unknown())).min(1).max(BATCH_UPDATE_MAX) });

// The Idempotency-Key of a create, with the hash of the body it came with.
export function idempotencyOf(ctx: AppContext, body: unknown): { key: string; requestHash: string } | undefined {
  const key = ctx.get('idempotency-key');
  if (key.length > 255) throw invalid('validation_failed', 'Idempotency-Key is limited to 255 characters');
  return key ? { key, requestHash: requestHash(body) } : undefined;
}

// A create body (POST /api/memories, or an item of POST /api/memories/batch) as the domain takes it.
export const newMemoryOf = (body: z.infer<typeof createBody>): NewMemory => ({
  content: body.content,
  namespace: body.namespace,
  tags: body.tags,
  source: body.source,
  sourceRef: body.source_ref,
  metadata: body.metadata,
  userId: body.user_id,
  agentId: body.agent_id,
  runId: body.run_id,
  occurredAt: body.occurred_at,
});

// An update body (PUT or PATCH /api/memories/:id, or an item of PUT /api/memories/batch) as the domain takes it.
export const memoryPatchOf = (body: z.infer<typeof patchBody>): MemoryPatch => ({
  content: body.content,
  tags: body.tags,
  namespace: body.namespace,
  metadata: body.metadata,
  userId: body.user_id,
  agentId: body.agent_id,
  runId: body.run_id,
  occurredAt: body.occurred_at,
});
