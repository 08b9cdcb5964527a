import { z } from 'zod';
import type { FairSlots } from '../../domain/fair-slots.ts';
import { batchUpdate, rowFailure, type BatchItem as UpdateItem, type BatchUpdateFailure } from '../../domain/memories/batch.ts';
import { createMemories, type BatchItem } from '../../domain/memories/create-batch.ts';
import { BATCH_CREATE_MAX, BATCH_UPDATE_MAX } from '../../domain/memories/limits.ts';
import { invalid, type AppError } from '../../domain/errors.ts';
import { memoriesSaved } from '../../infra/metrics.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { statusOf } from '../http/errors.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { namespaceAlias, unknownFieldError } from '../http/unknown-fields.ts';
import { upgradeUrlOf } from '../llm.ts';
import {
  batchCreateBody,
  batchItem,
  batchUpdateBody,
  contentRequired,
  createBody,
  idempotencyOf,
  memoryPatchOf,
  newMemoryOf,
  patchable,
} from './requests.ts';
import { memoryRecord, memorySchema } from '../../domain/store/model.ts';
import { postMemoriesBatch, putMemoriesBatch } from './descriptions.ts';

const itemFailure = z
  .object({
    index: z.number().int().meta({ description: "the item's place in `memories`, from 0" }),
    status: z.number().int().meta({ description: 'what POST /api/memories would have answered for it: 400, 402, 409 or 413' }),
    error: z.string(),
    message: z.string(),
  })
  .catchall(z.unknown())
  .meta({ id: 'BatchItemFailure' });

const batchCreateResponse = z
  .object({
    created: z.number().int(),
    results: z
      .array(memorySchema.extend({ index: z.number().int() }))
      .meta({ description: 'the memories saved, in request order, each with its index' }),
    failed: z.array(itemFailure).meta({ description: 'the items not saved, in request order' }),
  })
  .meta({ id: 'BatchCreateResult' });

// The parse of one item: the single save's body rules, with its error naming the item.
function parseItem(sent: Record<string, unknown>, index: number): BatchItem {
  const where = `memories.${index}`;
  let raw: unknown;
  try {
    raw = namespaceAlias(createBody, sent, where);
  } catch (err) {
    return { index, failure: err as AppError };
  }
  const unknown = unknownFieldError(createBody, raw, where);
  if (unknown) return { index, failure: unknown };
  const item = createBody.safeParse(raw);
  if (item.success) return { index, input: newMemoryOf(item.data) };
  const code = contentRequired(item.error.issues) ?? 'validation_failed';
  const issues = item.error.issues.map((i) => ({ path: `memories.${index}.${i.path.join('.')}`, message: i.message }));
  return { index, failure: invalid(code, issues.map((i) => `${i.path}: ${i.message}`).join('; '), { issues }) };
}

// `batches`: the slots every batch write runs in, the orgs in turn (domain/memories/batch-slots.ts).
export function batchRoutes(deps: ApiDeps, batches: FairSlots): AnyRoute[] {
  const upgradeUrl = upgradeUrlOf(deps.config);
  const llm = { llm: deps.llm, escrowKey: deps.config.byokEscrowKey };
  return [
    defineRoute({
      method: 'post',
      path: '/api/memories/batch',
      tag: 'memories',
      access: 'caller',
      summary: `Save up to ${BATCH_CREATE_MAX} memories in one call; one rate-limit slot`,
      description: postMemoriesBatch,
      body: batchCreateBody,
      responses: {
        200: { description: 'The outcome per item', schema: batchCreateResponse },
        409: { description: '`idempotency_key_reused` or `idempotency_key_in_use`' },
      },
      handler: async (ctx, { body }) => {
        const items = body.memories.map(parseItem);
        const caller = callerOf(ctx);
        const idempotency = idempotencyOf(ctx, body);
        const save = () => createMemories(ctx.state.em, caller, items, { upgradeUrl, llm, idempotency });
        const outcome = await batches.run(caller.orgId, save);
        if (outcome.replayed) ctx.set('Idempotent-Replayed', 'true');
        else memoriesSaved.inc(outcome.created.length);
        ctx.body = {
          created: outcome.created.length,
          results: outcome.created.map(({ index, memory }) => ({ index, ...memoryRecord(memory) })),
          failed: outcome.failed.map(({ index, kind, error, message, extra }) => ({
            index,
            status: statusOf(kind),
            error,
            message,
            ...extra,
          })),
        };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/memories/batch',
      tag: 'memories',
      access: 'caller',
      summary: `Update up to ${BATCH_UPDATE_MAX} memories; one rate-limit slot`,
      description: putMemoriesBatch,
      body: batchUpdateBody,
      responses: {
        200: {
          description: 'Outcome per row',
          schema: z.object({
            updated: z.number().int(),
            failed: z.array(
              z
                .object({
                  id: z.string().nullable(),
                  error: z.string(),
                  // Optional for clients of servers from before it was sent (2026-11-29); this one always sends it.
                  message: z.string().optional(),
                  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
                })
                .catchall(z.unknown()),
            ),
            results: z.array(memorySchema),
          }),
        },
      },
      handler: async (ctx, { body }) => {
        const valid: UpdateItem[] = [];
        const failed: BatchUpdateFailure[] = [];
        for (const [index, sent] of body.updates.entries()) {
          const id = typeof sent.id === 'string' ? sent.id : null;
          let raw: unknown;
          try {
            raw = namespaceAlias(batchItem, sent, `updates.${index}`);
          } catch (err) {
            failed.push(rowFailure(id, err as AppError));
            continue;
          }
          const unknown = unknownFieldError(batchItem, raw, `updates.${index}`);
          const item = batchItem.safeParse(raw);
          if (unknown) failed.push(rowFailure(id, unknown));
          else if (!item.success) {
            const issues = item.error.issues.map((i) => ({ path: `updates.${index}.${i.path.join('.')}`, message: i.message }));
            failed.push({ id, error: 'validation_failed', message: issues.map((i) => `${i.path}: ${i.message}`).join('; '), issues });
          } else if (patchable.isEmpty(item.data)) failed.push({ id, error: 'no patchable fields supplied', message: patchable.message });
          else valid.push({ id: item.data.id, ...memoryPatchOf(item.data) });
        }
        const caller = callerOf(ctx);
        const outcome = await batches.run(caller.orgId, () => batchUpdate(ctx.state.em, caller, valid, { upgradeUrl, llm }));
        failed.push(...outcome.failed);
        ctx.body = { updated: outcome.results.length, failed, results: outcome.results.map(memoryRecord) };
      },
    }),
  ];
}
