import { z } from 'zod';
import { MESSAGE_ROLES } from '../../domain/conversations/roles.ts';
import { BATCH_CREATE_MAX } from '../../domain/memories/limits.ts';
import { MAX_PARENT_REF, metadata, namespaceName, occurredAt, scopeFields, tags } from '../memories/schemas.ts';

// The body of POST /api/conversations (routes.ts), shared with mem0's compatible routes and the MCP tools.

export const conversationMessage = z.object({
  role: z.enum(MESSAGE_ROLES),
  content: z.string().meta({ description: 'what was said; saved as the memory content, secrets redacted' }),
  name: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .optional()
    .meta({ description: "who said it, when the role is not enough (a person's or a tool's name)" }),
  occurred_at: occurredAt.optional().meta({ description: 'when it was said, epoch ms; default: the time of the call' }),
});

export const conversationBody = z.object({
  messages: z.array(conversationMessage).min(1).max(BATCH_CREATE_MAX),
  conversation_id: z.string().trim().min(1).max(MAX_PARENT_REF).optional().meta({
    description: 'the thread the messages join (their metadata.parent_ref); default: run_id when given, else a new id (conv_...)',
  }),
  namespace: namespaceName.optional(),
  tags: tags.optional(),
  metadata: metadata.optional().meta({ description: "copied into each message's memory, beside parent_ref, chunk_index, role and name" }),
  ...scopeFields,
  infer: z.boolean().optional().meta({
    description:
      "true: the org's curator also extracts the facts worth keeping from the new messages and reconciles them with the memories extracted before in the same scope (ADD, UPDATE, DELETE or NONE each), in the background; the answer's extraction says how to follow it. Needs a paid plan or your own key (metadata.byok_primary_key / byok_alternate_key), else the extraction is recorded skipped. The messages are saved either way. Default false",
  }),
});
