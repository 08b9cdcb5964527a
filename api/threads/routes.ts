import { z } from 'zod';
import { getThread, listThreads } from '../../domain/threads/threads.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { intParam } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { namespaceName } from '../memories/schemas.ts';
import { getThreads } from './descriptions.ts';

const summary = z
  .object({
    parent_ref: z.string(),
    namespace: z.string(),
    count: z.number().int(),
    first_at: epochMs,
    last_at: epochMs,
    title: z.string(),
    has_chunks: z.boolean(),
  })
  .meta({ id: 'ThreadSummary' });
const summaryJson = wireOf(summary);

export function threadRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/threads',
      tag: 'threads',
      access: 'caller',
      summary: 'Conversation threads (memories grouped by metadata.parent_ref), newest first; a plain array',
      description: getThreads,
      query: z.object({
        namespace: namespaceName.optional(),
        solo: z.enum(['include', 'exclude']).default('include').meta({
          description: '`exclude`: conversations only, leaving out the memories saved outside any thread (still read at /api/threads/{id})',
        }),
        limit: intParam(1, 500).default(100),
        offset: intParam(0, 100_000).default(0),
      }),
      responses: { 200: { description: 'Thread summaries', schema: z.array(summary) } },
      handler: async (ctx, { query }) => {
        const threads = await listThreads(ctx.state.em, callerOf(ctx).orgId, { ...query, solo: query.solo === 'include' });
        ctx.body = threads.map(summaryJson);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/threads/:ref',
      tag: 'threads',
      access: 'caller',
      summary: "One thread's chunks in order; a ref matching no thread is tried as a memory id",
      params: z.object({ ref: z.string().min(1).max(500) }),
      responses: {
        200: {
          description: 'Chunks ordered by metadata.chunk_index when present, then created_at',
          schema: z.object({
            parent_ref: z.string(),
            chunks: z.array(z.object({ id: z.uuid(), content: z.string(), metadata: z.record(z.string(), z.unknown()) })),
          }),
        },
        404: { description: 'No thread and no memory with that ref' },
      },
      handler: async (ctx, { params }) => {
        const thread = await getThread(ctx.state.em, callerOf(ctx).orgId, params.ref);
        ctx.body = { parent_ref: thread.parentRef, chunks: thread.chunks };
      },
    }),
  ];
}
