import { z } from 'zod';
import { getDeletion, requestDeletion, type DeletionView } from '../../domain/memories/delete-by-filter.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { filterFields, filterInputOf, toFilters } from './schemas.ts';
import { postMemoriesDeletions } from './descriptions.ts';

const deletionSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(['pending', 'running', 'completed']),
    filters: z.record(z.string(), z.unknown()),
    matched: z.number().int().meta({ description: 'the memories that matched when the deletion was asked for' }),
    deleted: z.number().int().meta({ description: 'the memories deleted so far' }),
    created_at: epochMs,
    completed_at: epochMs.nullable(),
  })
  .meta({ id: 'MemoryDeletion' });

const deletionJson = wireOf(deletionSchema);
// The filters as the request spelled them (the domain stores its own spelling).
const json = (d: DeletionView) => deletionJson({ ...d, filters: filterInputOf(d.filters) });

// Deleting many memories at once: by filter, as a durable job whose progress the caller follows.
export function deletionRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/memories/deletions',
      tag: 'memories',
      access: 'caller',
      summary:
        'Delete every memory matching a filter (admins); answers 202 with the job, whose progress GET /api/memories/deletions/:id shows',
      description: postMemoriesDeletions,
      body: z.object({ filters: z.object(filterFields) }),
      responses: {
        202: { description: 'The deletion, pending', schema: deletionSchema },
        400: { description: '`filter_required`: no filter that selects memories' },
        403: { description: 'Not an admin of the org' },
      },
      handler: async (ctx, { body }) => {
        ctx.status = 202;
        ctx.body = json(await requestDeletion(ctx.state.em, callerOf(ctx), toFilters(body.filters)));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/memories/deletions/:id',
      tag: 'memories',
      access: 'caller',
      summary: 'A deletion by filter: its status and how many memories it has deleted',
      params: z.object({ id: z.uuid() }),
      responses: { 200: { description: 'The deletion', schema: deletionSchema }, 404: { description: 'No such deletion in this org' } },
      handler: async (ctx, { params }) => {
        ctx.body = json(await getDeletion(ctx.state.em, callerOf(ctx).orgId, params.id));
      },
    }),
  ];
}
