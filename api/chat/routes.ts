import { z } from 'zod';
import { appendTurns, assertSessionOwned } from '../../domain/chat/sessions.ts';
import { chatContext, chatTask, citationsOf, lastUserMessage } from '../../domain/chat/prompt.ts';
import { byokOf, requireLlm } from '../../domain/llm/port.ts';
import type { QueryVectors } from '../../domain/search/query-vectors.ts';
import type { ApiDeps } from '../deps.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { byokFields, upgradeUrlOf } from '../llm.ts';
import { namespaceName } from '../memories/schemas.ts';
import { chatCitationSchema, chatRoleSchema } from './sessions.ts';
import { postChat } from './descriptions.ts';

const message = z.object({ role: chatRoleSchema, content: z.string().min(1).max(100_000) });

const runbookProposal = z
  .object({
    title: z.string(),
    summary: z.string(),
    trigger_phrases: z.array(z.string()),
    steps: z.array(z.object({ description: z.string(), command: z.string().nullable() })),
  })
  .meta({ id: 'RunbookProposal', description: 'a runbook the model offers to save; POST it to /api/procedural to keep it' });

export function chatRoutes(deps: ApiDeps, queries: QueryVectors): AnyRoute[] {
  const upgradeUrl = upgradeUrlOf(deps.config);
  return [
    defineRoute({
      method: 'post',
      path: '/api/chat',
      tag: 'chat',
      access: 'caller',
      summary: 'Memory-augmented chat completion',
      description: postChat,
      body: z.object({
        messages: z
          .array(message)
          .min(1)
          .max(100)
          .refine((m) => m.some((x) => x.role === 'user'), 'at least one message must have role user'),
        session_id: z.uuid().optional(),
        namespace: namespaceName.optional(),
        ...byokFields,
      }),
      responses: {
        200: {
          description: 'The reply',
          schema: z.object({
            reply: z.string(),
            citations: z.array(chatCitationSchema),
            runbook_proposal: runbookProposal.nullable(),
            session_id: z.uuid().nullable(),
            via: z.enum(['primary', 'alternate', 'byok']),
          }),
        },
        402: { description: '`plan_required`, with upgrade_url' },
        404: { description: 'session_id is not a session of the caller' },
        502: { description: '`llm_rejected` (a BYOK key was refused) or `llm_malformed_output`' },
        503: { description: '`llm_unavailable` or `llm_not_configured`' },
      },
      handler: async (ctx, { body }) => {
        const caller = callerOf(ctx);
        const byok = byokOf(body);
        requireLlm(deps.llm, caller.plan, byok, upgradeUrl);
        if (body.session_id) await assertSessionOwned(ctx.state.em, caller, body.session_id);
        const context = await chatContext(ctx.state.em, queries, caller.orgId, body.messages, body.namespace);
        const answer = await deps.llm.run(chatTask(body.messages, context), byok);
        const citations = citationsOf(context);
        if (body.session_id) {
          await appendTurns(ctx.state.em, caller, body.session_id, [
            { role: 'user', content: lastUserMessage(body.messages) },
            { role: 'assistant', content: answer.value.reply, citations },
          ]);
        }
        ctx.body = {
          reply: answer.value.reply,
          citations,
          runbook_proposal: answer.value.runbook_proposal,
          session_id: body.session_id ?? null,
          via: answer.via,
        };
      },
    }),
  ];
}
