import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Caller } from '../accounts/caller.ts';
import { notFound } from '../errors.ts';
import { query, queryOne, sql, toDate } from '../sql.ts';
import { recordEvents } from '../webhooks/event-log.ts';
import { DECISIONS, type Decision } from './tasks.ts';
import { epochMs, wireOf } from '../wire.ts';

// One extraction from a conversation's new messages (POST /api/conversations with infer): queued with the
// messages, run by the org's curator after them, then processed (with its decisions), failed or skipped, each
// with a reason.
export type ExtractionStatus = 'queued' | 'processed' | 'failed' | 'skipped';

export interface ExtractionDecision {
  action: Decision;
  fact: string;
  // ADD and UPDATE: the memory saved; UPDATE, DELETE and NONE: the existing memory it concerns.
  memoryId: string | null;
  targetId: string | null;
}

export interface ExtractionView {
  id: string;
  conversationId: string;
  messageIds: string[];
  status: ExtractionStatus;
  reason: string | null;
  decisions: ExtractionDecision[];
  tokensIn: number;
  tokensOut: number;
  createdAt: number;
  processedAt: number | null;
}

interface ExtractionRow {
  id: string;
  conversation_id: string;
  message_ids: string[];
  status: ExtractionStatus;
  reason: string | null;
  decisions: ExtractionDecision[];
  tokens_in: number;
  tokens_out: number;
  caller: Caller;
  created_at: string;
  processed_at: string | null;
}

const COLUMNS = sql`id, conversation_id, message_ids, status, reason, decisions, tokens_in, tokens_out, caller, created_at, processed_at`;

const view = (r: ExtractionRow): ExtractionView => ({
  id: r.id,
  conversationId: r.conversation_id,
  messageIds: r.message_ids,
  status: r.status,
  reason: r.reason,
  decisions: r.decisions,
  tokensIn: r.tokens_in,
  tokensOut: r.tokens_out,
  createdAt: toDate(r.created_at).getTime(),
  processedAt: r.processed_at ? toDate(r.processed_at).getTime() : null,
});

// The extraction as webhooks and the API show it.
export const extractionSchema = z
  .object({
    id: z.uuid(),
    conversation_id: z.string(),
    message_ids: z.array(z.uuid()),
    status: z.enum(['queued', 'processed', 'failed', 'skipped']),
    reason: z
      .string()
      .nullable()
      .meta({
        description:
          'why it failed or was skipped: llm_not_configured, plan_required, llm_budget (the org passed ' +
          'EXTRACTION_TOKENS_PER_MONTH), messages_gone, keys_expired, llm_unavailable, llm_rejected, llm_malformed_output',
      }),
    decisions: z.array(
      z.object({
        action: z.enum(DECISIONS),
        fact: z.string(),
        memory_id: z.uuid().nullable().meta({ description: 'ADD and UPDATE: the memory saved' }),
        target_id: z
          .uuid()
          .nullable()
          .meta({ description: 'UPDATE, DELETE, NONE: the existing memory it concerns (superseded for UPDATE and DELETE)' }),
      }),
    ),
    tokens_in: z.number().int(),
    tokens_out: z.number().int(),
    created_at: epochMs,
    processed_at: epochMs.nullable(),
  })
  .meta({ id: 'ConversationExtraction' });

export const extractionRecord = wireOf(extractionSchema);

// Recorded in the caller's transaction with the messages; one that cannot run is recorded skipped at once.
export async function recordExtraction(
  tx: EntityManager,
  caller: Caller,
  e: { id: string; conversationId: string; messageIds: string[]; skipped: string | null },
): Promise<ExtractionView> {
  const row = await queryOne(
    tx,
    sql<ExtractionRow>`insert into conversation_extractions (org_id, id, conversation_id, message_ids, status, reason, caller, processed_at)
      values (${caller.orgId}, ${e.id}, ${e.conversationId}, ${e.messageIds}::uuid[], ${e.skipped ? 'skipped' : 'queued'}, ${e.skipped},
              ${JSON.stringify(caller)}::jsonb, ${e.skipped ? sql`now()` : sql`null`})
      returning ${COLUMNS}`,
  );
  return view(row!);
}

export async function getExtraction(em: EntityManager, orgId: string, id: string): Promise<ExtractionView> {
  const row = await queryOne(
    em,
    sql<ExtractionRow>`select ${COLUMNS} from conversation_extractions where org_id = ${orgId} and id = ${id}`,
  );
  if (!row) throw notFound('extraction', id);
  return view(row);
}

// A conversation's extractions, newest first (at most `limit`).
export async function conversationExtractions(
  em: EntityManager,
  orgId: string,
  conversationId: string,
  limit: number,
): Promise<ExtractionView[]> {
  const rows = await query(
    em,
    sql<ExtractionRow>`select ${COLUMNS} from conversation_extractions where org_id = ${orgId} and conversation_id = ${conversationId}
      order by created_at desc, id desc limit ${limit}`,
  );
  return rows.map(view);
}

// The queued extraction whose last message is `memoryId`, locked for its run, with who asked for it.
export async function queuedExtraction(
  tx: EntityManager,
  orgId: string,
  memoryId: string,
): Promise<(ExtractionView & { caller: Caller }) | null> {
  const row = await queryOne(
    tx,
    sql<ExtractionRow>`select ${COLUMNS} from conversation_extractions
      where org_id = ${orgId} and message_ids[array_upper(message_ids, 1)] = ${memoryId} and status = 'queued'
      order by created_at limit 1 for update skip locked`,
  );
  return row ? { ...view(row), caller: row.caller } : null;
}

// The run's outcome, its tokens counted to the org's month, and the conversation.extracted event, in the caller's
// transaction.
export async function finishExtraction(
  tx: EntityManager,
  orgId: string,
  id: string,
  outcome: {
    status: Exclude<ExtractionStatus, 'queued'>;
    reason: string | null;
    decisions: ExtractionDecision[];
    tokensIn: number;
    tokensOut: number;
  },
): Promise<ExtractionView> {
  const row = await queryOne(
    tx,
    sql<ExtractionRow>`update conversation_extractions set status = ${outcome.status}, reason = ${outcome.reason}, decisions = ${JSON.stringify(outcome.decisions)}::jsonb,
        tokens_in = ${outcome.tokensIn}, tokens_out = ${outcome.tokensOut}, processed_at = now()
      where org_id = ${orgId} and id = ${id} returning ${COLUMNS}`,
  );
  await countTokens(tx, orgId, outcome.tokensIn, outcome.tokensOut);
  const extraction = view(row!);
  await recordEvents(tx, [{ orgId, type: 'conversation.extracted', data: extractionRecord(extraction) }]);
  return extraction;
}

async function countTokens(tx: EntityManager, orgId: string, tokensIn: number, tokensOut: number): Promise<void> {
  if (tokensIn + tokensOut === 0) return;
  await query(
    tx,
    sql`insert into llm_usage (org_id, month, tokens_in, tokens_out) values (${orgId}, date_trunc('month', now())::date, ${tokensIn}, ${tokensOut})
      on conflict (org_id, month) do update set tokens_in = llm_usage.tokens_in + excluded.tokens_in, tokens_out = llm_usage.tokens_out + excluded.tokens_out`,
  );
}

// The org's model tokens this month (UTC), in and out.
export async function monthlyTokens(em: EntityManager, orgId: string): Promise<{ in: number; out: number }> {
  const row = await queryOne(
    em,
    sql<{
      tokens_in: string;
      tokens_out: string;
    }>`select tokens_in, tokens_out from llm_usage where org_id = ${orgId} and month = date_trunc('month', now())::date`,
  );
  return { in: Number(row?.tokens_in ?? 0), out: Number(row?.tokens_out ?? 0) };
}
