import { z } from 'zod';
import { createRunbook, deleteRunbook, getRunbook, listRunbooks, recordOutcome, updateRunbook } from '../../domain/runbooks/runbooks.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { patchGuard } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { metadata } from '../memories/schemas.ts';
import { listQuery, outcomeBody } from './requests.ts';
import { postProceduralId } from './descriptions.ts';

const MAX_TEXT = 10_000;

const stepSchema = z
  .object({ description: z.string(), command: z.string().optional(), check: z.string().optional(), notes: z.string().optional() })
  .meta({ id: 'RunbookStep' });

const runbookSchema = z
  .object({
    id: z.uuid(),
    title: z.string(),
    summary: z.string(),
    trigger_phrases: z.array(z.string()),
    steps: z.array(stepSchema),
    metadata: z.record(z.string(), z.unknown()),
    success_count: z.number().int(),
    failure_count: z.number().int(),
    created_at: epochMs,
    updated_at: epochMs,
    last_used_at: epochMs.nullable().meta({ description: 'when an outcome was last reported; null before the first' }),
  })
  .meta({ id: 'Runbook' });

const runbookJson = wireOf(runbookSchema);

const fields = {
  title: z.string().trim().min(1).max(200).meta({ description: 'unique within the org, compared case-insensitively' }),
  summary: z.string().max(MAX_TEXT),
  trigger_phrases: z
    .array(z.string().trim().min(1).max(200))
    .max(50)
    .meta({ description: 'a runbook is suggested when one of these occurs (case-insensitively) in the text at hand' }),
  steps: z
    .array(
      z.object({
        description: z.string().trim().min(1).max(MAX_TEXT),
        command: z.string().max(MAX_TEXT).optional(),
        check: z.string().max(MAX_TEXT).optional(),
        notes: z.string().max(MAX_TEXT).optional(),
      }),
    )
    .max(200),
  metadata,
};

const createBody = z.object({
  title: fields.title,
  summary: fields.summary.optional(),
  trigger_phrases: fields.trigger_phrases.optional(),
  steps: fields.steps.optional(),
  metadata: fields.metadata.optional(),
});

const patchBody = z.object({
  title: fields.title.optional(),
  summary: fields.summary.optional(),
  trigger_phrases: fields.trigger_phrases.optional().meta({ description: 'replaces the list' }),
  steps: fields.steps.optional().meta({ description: 'replaces the list' }),
  metadata: fields.metadata.optional().meta({ description: 'merged; a key set to null is removed' }),
});

const idParams = z.object({ id: z.uuid() });
const notInOrg = { description: 'Not in this org' };
const titleTaken = { description: '`runbook_title_taken`' };

export function runbookRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/procedural',
      tag: 'runbooks',
      access: 'caller',
      summary: 'Runbooks (procedural memories) of the org, most recently changed first',
      query: listQuery,
      responses: { 200: { description: 'Runbooks', schema: z.object({ procedurals: z.array(runbookSchema) }) } },
      handler: async (ctx, { query }) => {
        ctx.body = { procedurals: (await listRunbooks(ctx.state.em, callerOf(ctx).orgId, query)).map(runbookJson) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/procedural',
      tag: 'runbooks',
      access: 'caller',
      summary: 'Create a runbook',
      body: createBody,
      responses: { 201: { description: 'The new runbook', schema: runbookSchema }, 409: titleTaken },
      handler: async (ctx, { body }) => {
        const input = {
          title: body.title,
          summary: body.summary,
          triggerPhrases: body.trigger_phrases,
          steps: body.steps,
          metadata: body.metadata,
        };
        ctx.body = runbookJson(await createRunbook(ctx.state.em, callerOf(ctx), input));
        ctx.status = 201;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/procedural/:id',
      tag: 'runbooks',
      access: 'caller',
      summary: 'One runbook',
      params: idParams,
      responses: { 200: { description: 'The runbook', schema: runbookSchema }, 404: notInOrg },
      handler: async (ctx, { params }) => {
        ctx.body = runbookJson(await getRunbook(ctx.state.em, callerOf(ctx).orgId, params.id));
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/api/procedural/:id',
      tag: 'runbooks',
      access: 'caller',
      summary: 'Update some fields of a runbook',
      params: idParams,
      body: patchBody,
      responses: { 200: { description: 'The updated runbook', schema: runbookSchema }, 404: notInOrg, 409: titleTaken },
      handler: async (ctx, { params, body }) => {
        patchGuard(patchBody.shape).assert(body);
        const patch = {
          title: body.title,
          summary: body.summary,
          triggerPhrases: body.trigger_phrases,
          steps: body.steps,
          metadata: body.metadata,
        };
        ctx.body = runbookJson(await updateRunbook(ctx.state.em, callerOf(ctx), params.id, patch));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/procedural/:id',
      tag: 'runbooks',
      access: 'caller',
      summary: 'Delete a runbook',
      params: idParams,
      responses: { 200: { description: 'Deleted', schema: z.object({ deleted: z.literal(true) }) }, 404: notInOrg },
      handler: async (ctx, { params }) => {
        await deleteRunbook(ctx.state.em, callerOf(ctx), params.id);
        ctx.body = { deleted: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/procedural/:id',
      tag: 'runbooks',
      access: 'caller',
      summary: 'Report the outcome of following a runbook',
      description: postProceduralId,
      params: idParams,
      body: outcomeBody,
      responses: { 200: { description: 'The updated runbook', schema: runbookSchema }, 404: notInOrg },
      handler: async (ctx, { params, body }) => {
        ctx.body = runbookJson(await recordOutcome(ctx.state.em, callerOf(ctx), params.id, body.outcome));
      },
    }),
  ];
}
