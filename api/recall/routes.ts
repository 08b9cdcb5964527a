import { z } from 'zod';
import { listRecalls, logRecall } from '../../domain/recall/recall.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { intParam } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { recallBody } from './requests.ts';
import { postRecall } from './descriptions.ts';

const recallOutcome = z.object({ logged: z.number().int(), skipped: z.number().int() });

const recallSchema = z.object({
  id: z.uuid(),
  memory_id: z.uuid(),
  source: z.string().nullable(),
  query: z.string().nullable(),
  recalled_at: epochMs,
  recalled_by: z.uuid().nullable(),
});
const recallJson = wireOf(recallSchema);

export function recallRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/recall',
      tag: 'recall',
      access: 'caller',
      summary: 'Log that memories were recalled',
      description: postRecall,
      body: recallBody,
      responses: { 200: { description: 'Outcome', schema: recallOutcome } },
      handler: async (ctx, { body }) => {
        ctx.body = await logRecall(ctx.state.em, callerOf(ctx), { memoryIds: body.memory_ids, source: body.source, query: body.query });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/recall',
      tag: 'recall',
      access: 'caller',
      summary: 'Recall log, newest first',
      query: z.object({ memory_id: z.uuid().optional(), limit: intParam(1, 500).default(50) }),
      responses: {
        200: {
          description: 'Entries',
          schema: z.object({
            recalls: z.array(recallSchema),
          }),
        },
      },
      handler: async (ctx, { query }) => {
        const rows = await listRecalls(ctx.state.em, callerOf(ctx).orgId, { memoryId: query.memory_id, limit: query.limit });
        ctx.body = { recalls: rows.map(recallJson) };
      },
    }),
  ];
}
