import { z } from 'zod';
import { listAuditEvents } from '../../domain/audit/list.ts';
import { auditNames } from '../../domain/audit/names.ts';
import { auditActorField, auditTargetField, auditTokenField } from './schemas.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { intParam, ms, epochMsParam } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';

const eventSchema = z
  .object({
    id: z.uuid(),
    action: z.string(),
    target_id: z.string().nullable(),
    actor_user_id: z.uuid().nullable(),
    actor_token: z.uuid().nullable().meta({ description: 'id of the API token or session that acted' }),
    created_at: epochMs,
    actor: auditActorField,
    token: auditTokenField,
    target: auditTargetField,
  })
  .meta({ id: 'AuditEvent' });
const eventJson = wireOf(eventSchema);

const query = z.object({
  action: z.string().min(1).max(200).optional().meta({ description: 'prefix match, for example `memory.`' }),
  actor: z.uuid().optional(),
  target: z.string().min(1).max(200).optional(),
  since: epochMsParam.optional(),
  until: epochMsParam.optional(),
  limit: intParam(1, 500).default(100),
  offset: intParam(0, 1_000_000).default(0),
});

export function eventRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/events',
      tag: 'audit',
      access: 'caller',
      summary: "The organization's audit log, newest first",
      query,
      responses: {
        200: {
          description: 'Audit events',
          schema: z.object({ events: z.array(eventSchema), limit: z.number().int(), offset: z.number().int() }),
        },
      },
      handler: async (ctx, { query: q }) => {
        const orgId = callerOf(ctx).orgId;
        const rows = await listAuditEvents(ctx.state.em, orgId, q);
        const names = await auditNames(ctx.state.em, orgId, rows);
        ctx.body = {
          events: rows.map((e, i) => eventJson({ ...e, ...names[i]!, createdAt: ms(e.createdAt) })),
          limit: q.limit,
          offset: q.offset,
        };
      },
    }),
  ];
}
