import { z } from 'zod';
import { deleteEntity, ENTITY_MEMORY_LIMIT, getEntity, listEntities, updateEntity } from '../../domain/entities/entities.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { intParam, patchGuard } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { metadata } from '../memories/schemas.ts';
import { getEntities } from './descriptions.ts';

const entitySchema = z
  .object({
    id: z.uuid(),
    display_name: z.string(),
    entity_type: z.string(),
    aliases: z.array(z.string()),
    mention_count: z.number().int(),
    first_seen_at: epochMs,
    last_seen_at: epochMs,
    metadata: z.record(z.string(), z.unknown()),
    memories: z
      .array(
        z.object({
          id: z.uuid(),
          content: z.string(),
          namespace: z.string(),
          created_at: epochMs,
          linked_via: z.string().meta({ description: '`extraction` for links made by entity extraction' }),
        }),
      )
      .optional()
      .meta({ description: `only with include_memories: up to ${ENTITY_MEMORY_LIMIT} linked memories, newest first` }),
  })
  .meta({ id: 'Entity' });

const entityJson = wireOf(entitySchema);

const idParams = z.object({ id: z.uuid() });
const patchBody = z.object({
  display_name: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'renames; 409 `entity_name_taken` when another entity of the org has the same normalized name' }),
  entity_type: z.string().trim().min(1).max(50).optional().meta({ description: 'stored lowercased' }),
  aliases: z
    .array(z.string().trim().min(1).max(200))
    .max(50)
    .optional()
    .meta({ description: 'replaces the array; spellings that normalize alike are kept once' }),
  metadata: metadata.optional().meta({ description: 'merged; a key set to null is removed' }),
});

export function entityRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/entities',
      tag: 'entities',
      access: 'caller',
      summary: 'Entities of the org, most mentioned first',
      description: getEntities,
      query: z.object({
        q: z.string().max(200).optional(),
        entity_type: z.string().max(50).optional().meta({ description: 'exact type, case-insensitive' }),
        limit: intParam(1, 500).default(50),
        offset: intParam(0, 100_000).default(0),
      }),
      responses: { 200: { description: 'Entities', schema: z.object({ entities: z.array(entitySchema) }) } },
      handler: async (ctx, { query }) => {
        const rows = await listEntities(ctx.state.em, callerOf(ctx).orgId, {
          q: query.q,
          entityType: query.entity_type,
          limit: query.limit,
          offset: query.offset,
        });
        ctx.body = { entities: rows.map(entityJson) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/entities/:id',
      tag: 'entities',
      access: 'caller',
      summary: 'One entity, optionally with its linked memories',
      params: idParams,
      query: z.object({ include_memories: z.enum(['1', '0', 'true', 'false']).optional() }),
      responses: { 200: { description: 'The entity', schema: entitySchema }, 404: { description: 'Not in this org' } },
      handler: async (ctx, { params, query }) => {
        const include = query.include_memories === '1' || query.include_memories === 'true';
        ctx.body = entityJson(await getEntity(ctx.state.em, callerOf(ctx).orgId, params.id, include));
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/api/entities/:id',
      tag: 'entities',
      access: 'caller',
      summary: 'Rename, retype, replace aliases or merge metadata of an entity',
      params: idParams,
      body: patchBody,
      responses: {
        200: { description: 'The updated entity', schema: entitySchema },
        404: { description: 'Not in this org' },
        409: { description: '`entity_name_taken`' },
      },
      handler: async (ctx, { params, body }) => {
        patchGuard(patchBody.shape).assert(body);
        const patch = { displayName: body.display_name, entityType: body.entity_type, aliases: body.aliases, metadata: body.metadata };
        ctx.body = entityJson(await updateEntity(ctx.state.em, callerOf(ctx), params.id, patch));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/entities/:id',
      tag: 'entities',
      access: 'caller',
      summary: 'Delete an entity and its links to memories; the memories stay',
      params: idParams,
      responses: { 200: { description: 'Deleted', schema: z.object({ ok: z.literal(true) }) }, 404: { description: 'Not in this org' } },
      handler: async (ctx, { params }) => {
        await deleteEntity(ctx.state.em, callerOf(ctx), params.id);
        ctx.body = { ok: true };
      },
    }),
  ];
}
