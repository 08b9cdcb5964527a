import { z } from 'zod';
import type { FairSlots } from '../../domain/fair-slots.ts';
import { searchBulk } from '../../domain/search/bulk.ts';
import { FRESH_SCAN, freshVectors } from '../../domain/search/fresh.ts';
import { SEARCH_MODES, type SearchMode } from '../../domain/search/modes.ts';
import type { QueryVectors } from '../../domain/search/query-vectors.ts';
import { needsVector, searchMemories, type SearchAnswer } from '../../domain/search/search.ts';
import { AS_OF_ANALYZE_MAX_BYTES, AS_OF_SCAN_MAX, searchAsOf } from '../../domain/search/as-of.ts';
import { similarMemories } from '../../domain/search/similar.ts';
import type { MemoryFilters } from '../../domain/store/filters.ts';
import { searches } from '../../infra/metrics.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { errorBody } from '../http/errors.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { bulkBody, idParams, searchBody, similarQuery } from './requests.ts';
import { timeWindowOf, type TimeWindow } from '../../domain/search/time-words.ts';
import { filterInputOf, hitJson, scoredMemorySchema, toFilters } from './schemas.ts';
import {
  getMemoriesIdSimilar,
  getMemoriesIdSimilar409,
  postMemoriesSearch,
  postMemoriesSearch503,
  postMemoriesSearchBulk503,
} from './descriptions.ts';

// The search routes: one query, up to 25 at once, and "more like this" by a memory's own vector.

const answerExplainSchema = z
  .object({
    mode: z.enum(SEARCH_MODES),
    terms: z
      .array(z.string())
      .meta({ description: "the query's terms as the lexical list analyzed them (stemmed; in hybrid, question words left out)" }),
    filters: z.record(z.string(), z.unknown()).meta({ description: 'the filters applied, as the request spelled them' }),
    time: z.object({ phrase: z.string(), after: z.number().int(), before: z.number().int() }).optional().meta({
      description: "the window of event time (epoch ms, inclusive) the query's time words named, and those words; absent when none",
    }),
  })
  .meta({ id: 'SearchExplain' });
const pendingEmbeddings = z
  .number()
  .int()
  .min(0)
  .optional()
  .meta({
    description:
      `semantic and hybrid: memories the filters pass that this search could not score by meaning yet (found by ` +
      `their words only); exact while the org's backlog is among its ${FRESH_SCAN} latest writes, an upper bound ` +
      `otherwise`,
  });
const searchAnswer = z.object({
  hits: z.array(scoredMemorySchema),
  pending_embeddings: pendingEmbeddings,
  as_of: z.number().int().optional().meta({ description: 'the as_of the search was made at, when it was set (epoch ms)' }),
  explain: answerExplainSchema.optional(),
});

// What an as_of search refuses (docs/api-decisions.md, "As of a time").
const AS_OF_REFUSED = {
  schema: errorBody,
  description: [
    'Invalid input (`invalid json`, a validation failure with `issues`, `unknown_field`); also `as_of_too_broad`: a search',
    'as_of a time whose filters pass more than',
    `${AS_OF_SCAN_MAX.toLocaleString('en')} memories then, or whose memories superseded since hold more than`,
    `${AS_OF_ANALYZE_MAX_BYTES.toLocaleString('en')} bytes of text; narrow the filters (\`max_memories\` in the body)`,
  ].join(' '),
};

// The window of event time a query's words name, unless the request turned that off; read against the search's time.
type TimeFields = { reference_time?: number | undefined; as_of?: number | undefined; resolve_time: boolean };
const windowOf = (query: string, body: TimeFields): TimeWindow | null =>
  body.resolve_time ? timeWindowOf(query, body.reference_time ?? body.as_of ?? Date.now()) : null;

// The JSON of one answer.
function answerJson(answer: SearchAnswer, mode: SearchMode, filters: MemoryFilters, explain: boolean, asOf: number | undefined) {
  return {
    hits: answer.hits.map((hit) => hitJson(hit, { explain })),
    ...(answer.pendingEmbeddings !== null ? { pending_embeddings: answer.pendingEmbeddings } : {}),
    ...(asOf !== undefined ? { as_of: asOf } : {}),
    ...(explain
      ? { explain: { mode, terms: answer.terms, filters: filterInputOf(filters), ...(answer.window ? { time: answer.window } : {}) } }
      : {}),
  };
}

export function searchRoutes(deps: ApiDeps, queries: QueryVectors, slots: FairSlots): AnyRoute[] {
  const { embedder } = deps;
  // Memories still waiting for their vector, embedded for this request's searches (fresh.ts).
  const fresh = (orgId: string) => freshVectors(embedder, orgId);
  return [
    defineRoute({
      method: 'post',
      path: '/api/memories/search',
      tag: 'memories',
      access: 'caller',
      write: false,
      summary: 'Search by words (BM25), by meaning, or both; best first',
      description: postMemoriesSearch,
      body: searchBody,
      responses: {
        200: { description: 'Hits', schema: searchAnswer },
        400: AS_OF_REFUSED,
        503: { description: postMemoriesSearch503 },
      },
      handler: async (ctx, { body }) => {
        const { orgId } = callerOf(ctx);
        searches.inc({ mode: body.mode });
        const filters = toFilters(body);
        const request = {
          text: body.query,
          k: body.k,
          mode: body.mode,
          filters,
          minRelevance: body.min_relevance,
          window: windowOf(body.query, body),
        };
        // The query is embedded in the search's slot: a search refused its turn costs no model pass.
        const answer = await slots.run(orgId, () => {
          const vector = needsVector(body.mode) ? queries.of(orgId, [body.query]).then(([v]) => v!) : undefined;
          const { as_of: asOf } = body;
          if (asOf !== undefined) return searchAsOf(ctx.state.em, orgId, { ...request, asOf }, vector, fresh(orgId));
          return searchMemories(ctx.state.em, orgId, request, vector, fresh(orgId));
        });
        ctx.body = answerJson(answer, body.mode, filters, body.explain, body.as_of);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/memories/search/bulk',
      tag: 'memories',
      access: 'caller',
      write: false,
      summary: 'Up to 25 searches in one call (any mode); results in query order',
      body: bulkBody,
      responses: {
        200: {
          description: 'One entry per query',
          schema: z.object({ results: z.array(searchAnswer.extend({ query: z.string() })) }),
        },
        400: AS_OF_REFUSED,
        503: { description: postMemoriesSearchBulk503 },
      },
      handler: async (ctx, { body }) => {
        const { orgId } = callerOf(ctx);
        searches.inc({ mode: body.mode }, body.queries.length);
        const vectors = needsVector(body.mode) ? queries.of(orgId, body.queries) : undefined;
        const filters = toFilters(body);
        const answers = await searchBulk(() => ctx.state.em.fork(), orgId, body.queries, {
          k: body.k,
          mode: body.mode,
          filters,
          minRelevance: body.min_relevance,
          windows: body.queries.map((query) => windowOf(query, body)),
          asOf: body.as_of,
          vectors,
          fresh: fresh(orgId),
          slots,
        });
        ctx.body = {
          results: body.queries.map((query, i) => ({ query, ...answerJson(answers[i]!, body.mode, filters, body.explain, body.as_of) })),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/memories/:id/similar',
      tag: 'memories',
      access: 'caller',
      summary: 'Memories nearest in meaning to this one, best first',
      description: getMemoriesIdSimilar,
      params: idParams,
      query: similarQuery,
      responses: {
        200: { description: 'Hits', schema: z.object({ hits: z.array(scoredMemorySchema) }) },
        404: { description: 'No such memory in this org' },
        409: { description: getMemoriesIdSimilar409 },
        503: { description: '`embeddings_unavailable`: this server has no embedding model' },
      },
      handler: async (ctx, { params, query: q }) => {
        searches.inc({ mode: 'similar' });
        const { orgId } = callerOf(ctx);
        const hits = await slots.run(orgId, () =>
          similarMemories(ctx.state.em, orgId, embedder?.model ?? null, params.id, q.k, toFilters(q)),
        );
        ctx.body = { hits: hits.map((hit) => hitJson(hit, { relevance: false })) };
      },
    }),
  ];
}
