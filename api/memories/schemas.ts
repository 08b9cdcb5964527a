import { MAX_METADATA_JSON } from '../../domain/memories/limits.ts';
import type { MemoryFilters } from '../../domain/store/filters.ts';
import { z } from 'zod';
import { memorySchema, SCOPE_DOC } from '../../domain/store/model.ts';
import { RECOMMENDED_FLOOR, rounded } from '../../domain/search/relevance.ts';
import type { SearchHit } from '../../domain/search/search.ts';
import { compileExpression, FILTER_FIELDS, FILTER_LIMITS, FILTER_OPERATORS } from '../../domain/store/filter-expression.ts';
import { epochMsFilter, jsonObjectParam } from '../http/schemas.ts';
import { wireOf } from '../../domain/wire.ts';

export const namespaceName = z
  .string()
  .trim()
  .min(1)
  .max(200)
  // Control characters (Unicode Cc) spelled as ranges: the pattern is published in the OpenAPI document,
  // and clients' regex engines (Python's, for one) do not all know \p{Cc}.
  .regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, 'no control characters')
  .meta({ description: 'project (namespace) name; created on first use' });

// A scope's id: any string the caller's platform uses for its end users, agents or runs.
const MAX_SCOPE_ID = 200;
const scopeId = z
  .string()
  .trim()
  .min(1)
  .max(MAX_SCOPE_ID)
  .regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, 'no control characters');
// Event time as a create or patch field: from 1970 to the end of year 9999, as filters take instants.
export const occurredAt = epochMsFilter.meta({
  description: 'when what the memory tells happened (event time), epoch ms from 1970 to the end of 9999; default: the time it is saved',
});

// The scopes as create fields, patch fields (null removes one) and filters (exact match).
export const scopeFields = {
  user_id: scopeId.optional().meta({ description: `${SCOPE_DOC.user_id}; 1-${MAX_SCOPE_ID} characters` }),
  agent_id: scopeId.optional().meta({ description: `${SCOPE_DOC.agent_id}; 1-${MAX_SCOPE_ID} characters` }),
  run_id: scopeId.optional().meta({ description: `${SCOPE_DOC.run_id}; 1-${MAX_SCOPE_ID} characters` }),
};
export const scopePatchFields = {
  user_id: scopeId
    .nullable()
    .optional()
    .meta({ description: `${SCOPE_DOC.user_id}; null removes it` }),
  agent_id: scopeId
    .nullable()
    .optional()
    .meta({ description: `${SCOPE_DOC.agent_id}; null removes it` }),
  run_id: scopeId
    .nullable()
    .optional()
    .meta({ description: `${SCOPE_DOC.run_id}; null removes it` }),
};
const scopeFilterFields = {
  user_id: scopeId.optional().meta({ description: 'only the memories of this end user' }),
  agent_id: scopeId.optional().meta({ description: 'only the memories of this agent' }),
  run_id: scopeId.optional().meta({ description: 'only the memories of this run' }),
};

const tag = z.string().trim().min(1).max(128);
export const tags = z.array(tag).max(64);

// A thread's key is indexed (threads are read in order through it), and an index entry holds at most about
// 2,700 bytes: 512 characters of up to 4 bytes each stay under that.
export const MAX_PARENT_REF = 512;
const parentRefFits = (ref: unknown) =>
  ref === undefined || ref === null || typeof ref === 'number' || (typeof ref === 'string' && ref.length <= MAX_PARENT_REF);
export const metadata = z
  .record(z.string(), z.unknown())
  .refine((m) => JSON.stringify(m).length <= MAX_METADATA_JSON, `metadata is limited to ${MAX_METADATA_JSON} characters of JSON`)
  .refine((m) => parentRefFits(m.parent_ref), {
    message: `parent_ref is a string of at most ${MAX_PARENT_REF} characters (or a number)`,
    path: ['parent_ref'],
  })
  .meta({
    description:
      `free JSON object; see the contract for keys with meaning (parent_ref: a string of at most ${MAX_PARENT_REF} ` +
      `characters, or a number)`,
  });

const listPlace = z.object({ rank: z.number().int().min(1).meta({ description: '1-based' }), score: z.number() });
const hitExplainSchema = z
  .object({
    lexical: listPlace.optional().meta({
      description:
        "its place in the lexical list: rank and BM25 score (hybrid's list: question words left out, the namespace's statistics)",
    }),
    thread_context: z.number().optional().meta({
      description:
        'hybrid: the BM25 it gained from the chunks before it in its thread (its lexical score in fusion is lexical.score plus this)',
    }),
    semantic: listPlace.optional().meta({ description: 'its place in the semantic list: rank and cosine similarity' }),
    thread_terms: z
      .number()
      .optional()
      .meta({
        description:
          "hybrid: what its thread (metadata.parent_ref) added to its fused score, the thread's chunks scored together as one " +
          "document by the query's words",
      }),
    speaker_named: z
      .number()
      .optional()
      .meta({
        description:
          'hybrid: what a message gained because the query names its speaker (the first word of metadata.name, beside ' +
          'metadata.role, as conversation capture saves them): half its fused score',
      }),
    time_answer: z.number().optional().meta({
      description: 'hybrid: what it gained for stating a time ("last Friday", "in March", "2 weeks ago") when the query asks for one',
    }),
    short_message: z
      .number()
      .max(0)
      .optional()
      .meta({
        description:
          'hybrid: what a message (a memory with metadata.role) shorter than 400 bytes lost, a negative number: its score ' +
          'is multiplied by (bytes / 400) ^ 0.25',
      }),
    passage: z.number().int().optional().meta({ description: 'the passage (1-based) of a long memory its semantic score came from' }),
    fused: z.number().optional().meta({ description: "hybrid: the fused score (the hit's score)" }),
    time_window: z
      .literal(true)
      .optional()
      .meta({ description: "its event time lies in the window the query's time words named, which ranked it ahead of those outside" }),
    relevance_inputs: z
      .object({
        lexical: z.number().meta({
          description:
            "the BM25 score over the query's ceiling (what a memory holding every query term could score), capped at 1; 0 " +
            "if the words did not find it; hybrid: a chunk of a thread that holds the query's words counts its thread's " +
            'score (thread_terms) when higher',
        }),
        semantic: z.number().nullable().meta({
          description: "the cosine similarity (for a memory the semantic list missed, that list's last score); null in lexical mode",
        }),
      })
      .meta({ description: 'what its relevance was computed from (docs/api-decisions.md, "Relevance")' }),
  })
  .meta({ id: 'HitExplain' });

export const scoredMemorySchema = memorySchema
  .extend({
    score: z.number().meta({
      description:
        'lexical: the BM25 score; semantic: the cosine similarity of query and memory (for a memory with passages, the ' +
        "best of its text's cosine and its passages' cosines less 0.02); hybrid: the fused score, the weighted sum of " +
        "the scaled scores of both lists in [0, 1], plus less than 0.75 for a chunk of a thread that holds the query's words " +
        '(explain.thread_terms), that times 1.5 for a message whose speaker the query names (explain.speaker_named), plus ' +
        '0.25 for a memory that states a time when the query asks for one (explain.time_answer), all of that times ' +
        '(bytes / 400) ^ 0.25 for a message shorter than 400 bytes (explain.short_message): less than 3',
    }),
    relevance: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .meta({
        description:
          `search hits (every mode, bulk included): the calibrated chance in [0, 1] that the hit is relevant, on one ` +
          `scale in every mode, never rising down the ranking; min_relevance drops hits below a floor ` +
          `(${RECOMMENDED_FLOOR} is the recommended "nothing relevant" floor, docs/api-decisions.md, "Relevance"). ` +
          `Absent from similar.`,
      }),
    found_by: z.array(z.enum(['lexical', 'semantic'])).meta({ description: 'which lists found this memory (in hybrid, one or both)' }),
    matched_passage: z
      .object({
        start: z
          .number()
          .int()
          .meta({ description: 'where the passage starts in content, in UTF-16 code units (as JavaScript indexes strings)' }),
        end: z.number().int().meta({ description: 'where it ends (exclusive), in the same units' }),
        text: z.string().meta({ description: 'the passage itself: content from start to end' }),
      })
      .optional()
      .meta({
        description:
          'semantic and hybrid: for a memory over 2,000 characters found by meaning through one of its passages (windows ' +
          'of about 900 characters) rather than through its beginning, that passage: where in a long memory the answer ' +
          'lies. Absent otherwise.',
      }),
    explain: hitExplainSchema.optional().meta({ description: 'with explain: true, why it ranked where it did' }),
  })
  .meta({ id: 'ScoredMemory' });

const scoredMemoryRecord = wireOf(scoredMemorySchema);

// A search hit as the API gives it: `relevance` unless left out (similar), `explain` when asked.
export const hitJson = (hit: SearchHit, { relevance = true, explain = false }: { relevance?: boolean; explain?: boolean } = {}) =>
  scoredMemoryRecord({ ...hit, relevance: relevance ? rounded(hit.relevance) : null, explain: explain ? hit.explain : null });

const FILTERS_DOC =
  `the general filter grammar (docs/api-decisions.md, "Filter expressions"): AND / OR / NOT over conditions on ` +
  `${FILTER_FIELDS.join(', ')} (metadata: { "<key>": condition }); a condition is a value (eq), "*" (the field ` +
  `is set) or an object of operators ${FILTER_OPERATORS.join(', ')}; instants are epoch ms or ISO 8601. Combined ` +
  `with the other filter fields by AND. At most ${FILTER_LIMITS.depth} levels, ${FILTER_LIMITS.conditions} ` +
  `conditions and ${FILTER_LIMITS.values} values in a list; an unknown field or operator is a 400 naming it`;
const expressionChecked = (value: Record<string, unknown>, ctx: z.core.$RefinementCtx) => {
  for (const issue of compileExpression(value).issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
};
export const filterExpression = z.record(z.string(), z.unknown()).superRefine(expressionChecked).meta({ description: FILTERS_DOC });
// The same as a query parameter: URL-encoded JSON.
export const filterExpressionParam = jsonObjectParam
  .superRefine(expressionChecked)
  .meta({ description: `URL-encoded JSON: ${FILTERS_DOC}` });

// Filters shared by list, search and export requests.
export const filterFields = {
  namespace: namespaceName.optional(),
  created_after: epochMsFilter.optional(),
  created_before: epochMsFilter.optional(),
  updated_after: epochMsFilter.optional(),
  updated_before: epochMsFilter.optional(),
  occurred_after: epochMsFilter.optional().meta({ description: 'only memories whose event time (occurred_at) is at or after this' }),
  occurred_before: epochMsFilter.optional().meta({ description: 'only memories whose event time (occurred_at) is at or before this' }),
  metadata_filter: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: "JSON containment: the row's metadata must contain this object" }),
  tags: z.array(tag).max(64).optional().meta({ description: 'the memory must carry all of these tags' }),
  entity: z.uuid().optional().meta({ description: 'only memories mentioning this entity' }),
  include_superseded: z.boolean().optional().meta({ description: 'also return memories a consolidation merge superseded (default false)' }),
  ...scopeFilterFields,
  filters: filterExpression.optional(),
};

export type FilterInput = {
  namespace?: string | undefined;
  created_after?: number | undefined;
  created_before?: number | undefined;
  updated_after?: number | undefined;
  updated_before?: number | undefined;
  occurred_after?: number | undefined;
  occurred_before?: number | undefined;
  metadata_filter?: Record<string, unknown> | undefined;
  tags?: string[] | undefined;
  entity?: string | undefined;
  include_superseded?: boolean | undefined;
  user_id?: string | undefined;
  agent_id?: string | undefined;
  run_id?: string | undefined;
  filters?: Record<string, unknown> | undefined;
};

export const toFilters = (f: FilterInput) => ({
  namespace: f.namespace,
  createdAfter: f.created_after,
  createdBefore: f.created_before,
  updatedAfter: f.updated_after,
  updatedBefore: f.updated_before,
  occurredAfter: f.occurred_after,
  occurredBefore: f.occurred_before,
  metadataFilter: f.metadata_filter,
  tags: f.tags,
  entity: f.entity,
  includeSuperseded: f.include_superseded,
  userId: f.user_id,
  agentId: f.agent_id,
  runId: f.run_id,
  expression: f.filters,
});

// Filters as the API spells them, for echoing stored ones (only those set).
export const filterInputOf = (f: MemoryFilters): FilterInput => {
  const spelled: FilterInput = {
    namespace: f.namespace,
    created_after: f.createdAfter,
    created_before: f.createdBefore,
    updated_after: f.updatedAfter,
    updated_before: f.updatedBefore,
    occurred_after: f.occurredAfter,
    occurred_before: f.occurredBefore,
    metadata_filter: f.metadataFilter,
    tags: f.tags,
    entity: f.entity,
    include_superseded: f.includeSuperseded,
    user_id: f.userId,
    agent_id: f.agentId,
    run_id: f.runId,
    filters: f.expression,
  };
  return Object.fromEntries(Object.entries(spelled).filter(([, v]) => v !== undefined)) as FilterInput;
};
