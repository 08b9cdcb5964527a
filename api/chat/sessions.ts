import { z } from 'zod';
import {
  CHAT_PREVIEW_CHARS,
  CHAT_ROLES,
  CHAT_TITLE_MAX,
  CITATION_TYPES,
  createSession,
  deleteSession,
  getSession,
  listSessions,
  renameSession,
} from '../../domain/chat/sessions.ts';
import { callerOf } from '../http/auth.ts';
import { defineRoute, type AnyRoute } from '../http/route.ts';
import { intParam } from '../http/schemas.ts';
import { epochMs, wireOf } from '../../domain/wire.ts';
import { postChatSessions } from './descriptions.ts';

export const chatRoleSchema = z.enum(CHAT_ROLES).meta({ id: 'ChatRole' });

export const chatCitationSchema = z
  .object({ id: z.uuid(), type: z.enum(CITATION_TYPES), title: z.string() })
  .meta({ id: 'ChatCitation', description: 'a memory or runbook the reply drew on' });

const chatMessageSchema = z
  .object({ role: chatRoleSchema, content: z.string(), citations: z.array(chatCitationSchema), created_at: epochMs })
  .meta({ id: 'ChatMessage' });

const rowShape = {
  id: z.uuid(),
  title: z.string(),
  message_count: z.number().int(),
  last_message_preview: z
    .string()
    .meta({ description: `first ${CHAT_PREVIEW_CHARS} characters of the newest message; empty when there is none` }),
  created_at: epochMs,
  updated_at: epochMs,
};

const sessionRowSchema = z.object(rowShape).meta({ id: 'ChatSessionRow' });
const newSessionSchema = z.object({ ...rowShape, metadata: z.record(z.string(), z.unknown()) }).meta({ id: 'NewChatSession' });

const sessionSchema = z
  .object({
    id: z.uuid(),
    title: z.string(),
    metadata: z.record(z.string(), z.unknown()),
    messages: z.array(chatMessageSchema).meta({ description: 'oldest first' }),
    created_at: epochMs,
    updated_at: epochMs,
  })
  .meta({ id: 'ChatSession' });

const title = z.string().trim().min(1).max(CHAT_TITLE_MAX);
const idParams = z.object({ id: z.uuid() });
const notYours = { description: 'No such session of this user in this org (sessions are private to the user who created them)' };

const rowJson = wireOf(sessionRowSchema);
const newSessionJson = wireOf(newSessionSchema);
const sessionJson = wireOf(sessionSchema);

export function chatSessionRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/chat/sessions',
      tag: 'chat',
      access: 'caller',
      summary: "The caller's chat sessions in this org, most recently updated first",
      query: z.object({ limit: intParam(1, 200).default(50) }),
      responses: { 200: { description: 'Sessions', schema: z.object({ sessions: z.array(sessionRowSchema) }) } },
      handler: async (ctx, { query }) => {
        ctx.body = { sessions: (await listSessions(ctx.state.em, callerOf(ctx), query.limit)).map(rowJson) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/chat/sessions',
      tag: 'chat',
      access: 'caller',
      summary: 'Start a chat session',
      description: postChatSessions,
      body: z.object({ title: title.optional() }),
      responses: { 201: { description: 'The new session', schema: newSessionSchema } },
      handler: async (ctx, { body }) => {
        const session = await createSession(ctx.state.em, callerOf(ctx), body.title);
        ctx.body = newSessionJson(session);
        ctx.status = 201;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/chat/sessions/:id',
      tag: 'chat',
      access: 'caller',
      summary: 'One chat session with its messages',
      params: idParams,
      responses: { 200: { description: 'The session', schema: sessionSchema }, 404: notYours },
      handler: async (ctx, { params }) => {
        ctx.body = sessionJson(await getSession(ctx.state.em, callerOf(ctx), params.id));
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/api/chat/sessions/:id',
      tag: 'chat',
      access: 'caller',
      summary: 'Rename a chat session',
      params: idParams,
      body: z.object({ title }),
      responses: { 200: { description: 'The renamed session', schema: z.object({ id: z.uuid(), title: z.string() }) }, 404: notYours },
      handler: async (ctx, { params, body }) => {
        ctx.body = await renameSession(ctx.state.em, callerOf(ctx), params.id, body.title);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/chat/sessions/:id',
      tag: 'chat',
      access: 'caller',
      summary: 'Delete a chat session and its messages',
      params: idParams,
      responses: { 200: { description: 'Deleted', schema: z.object({ deleted: z.literal(true) }) }, 404: notYours },
      handler: async (ctx, { params }) => {
        await deleteSession(ctx.state.em, callerOf(ctx), params.id);
        ctx.body = { deleted: true };
      },
    }),
  ];
}
