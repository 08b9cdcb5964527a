import { z } from 'zod';
import { conversationExtractions, extractionRecord, extractionSchema, getExtraction } from '../../domain/extraction/extractions.ts';
import { captureConversation } from '../../domain/conversations/capture.ts';
import { BATCH_CREATE_MAX } from '../../domain/memories/limits.ts';
import { memoriesSaved } from '../../infra/metrics.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { upgradeUrlOf } from '../llm.ts';
import { idempotencyOf } from '../memories/requests.ts';
import { conversationBody } from './requests.ts';
import { MAX_PARENT_REF } from '../memories/schemas.ts';
import { memorySchema } from '../../domain/store/model.ts';
import { wireOf } from '../../domain/wire.ts';
import { postConversations } from './descriptions.ts';

const capturedConversation = z
  .object({
    conversation_id: z.string(),
    memories: z
      .array(memorySchema)
      .meta({ description: "the messages' memories, in order, each with metadata.chunk_index continuing the thread" }),
    extraction: extractionSchema.nullable().meta({
      description: 'with infer: the extraction, queued (or skipped, with its reason); GET /api/conversations/extractions/{id} follows it',
    }),
  })
  .meta({ id: 'CapturedConversation' });
const capturedJson = wireOf(capturedConversation);

export function conversationRoutes(deps: ApiDeps): AnyRoute[] {
  const upgradeUrl = upgradeUrlOf(deps.config);
  const llm = { llm: deps.llm, escrowKey: deps.config.byokEscrowKey };
  return [
    defineRoute({
      method: 'post',
      path: '/api/conversations',
      tag: 'memories',
      access: 'caller',
      summary: `Save a conversation's messages (up to ${BATCH_CREATE_MAX}) as the next chunks of its thread; one rate-limit slot`,
      description: postConversations,
      body: conversationBody,
      responses: {
        201: { description: 'Saved (or replayed)', schema: capturedConversation },
        402: { description: '`memory_quota_exceeded` or `storage_quota_exceeded` (free plan): nothing was saved' },
        409: { description: '`idempotency_key_reused`, `idempotency_key_in_use`, or `project_limit`' },
        413: { description: '`memory_too_large`: a message over the size of a memory, named in the message' },
      },
      handler: async (ctx, { body }) => {
        const result = await captureConversation(
          ctx.state.em,
          callerOf(ctx),
          {
            messages: body.messages.map((m) => ({ role: m.role, content: m.content, name: m.name, occurredAt: m.occurred_at })),
            conversationId: body.conversation_id,
            namespace: body.namespace,
            tags: body.tags,
            metadata: body.metadata,
            userId: body.user_id,
            agentId: body.agent_id,
            runId: body.run_id,
            infer: body.infer,
          },
          { upgradeUrl, llm, idempotency: idempotencyOf(ctx, body) },
        );
        if (result.replayed) ctx.set('Idempotent-Replayed', 'true');
        else memoriesSaved.inc(result.memories.length);
        ctx.status = 201;
        ctx.body = capturedJson(result);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/conversations/extractions',
      tag: 'memories',
      access: 'caller',
      summary: "A conversation's extractions, newest first (the 50 latest)",
      query: z.object({ conversation_id: z.string().trim().min(1).max(MAX_PARENT_REF) }),
      responses: { 200: { description: 'Its extractions', schema: z.object({ extractions: z.array(extractionSchema) }) } },
      handler: async (ctx, { query }) => {
        const found = await conversationExtractions(ctx.state.em, callerOf(ctx).orgId, query.conversation_id, 50);
        ctx.body = { extractions: found.map(extractionRecord) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/conversations/extractions/:id',
      tag: 'memories',
      access: 'caller',
      summary: 'An extraction from a conversation: its status, and once processed its decisions',
      params: z.object({ id: z.uuid() }),
      responses: {
        200: { description: 'The extraction', schema: extractionSchema },
        404: { description: 'No such extraction in this org' },
      },
      handler: async (ctx, { params }) => {
        ctx.body = extractionRecord(await getExtraction(ctx.state.em, callerOf(ctx).orgId, params.id));
      },
    }),
  ];
}
