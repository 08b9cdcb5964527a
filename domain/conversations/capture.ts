import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../accounts/caller.ts';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import { query, sql } from '../sql.ts';
import type { Metadata, MemoryView } from '../store/model.ts';
import { threadOrder } from '../store/threads.ts';
import { newPendingSave, type CreateContext } from '../memories/create.ts';
import { claimIdempotencyKey, storeIdempotentResult } from '../memories/idempotency.ts';
import { admitWithinQuota } from '../memories/quota.ts';
import { writeSaves, type PendingSave } from '../memories/save-batch.ts';
import { contentHash, type LlmAccess } from '../enrichment/schedule.ts';
import { recordExtraction, type ExtractionView } from '../extraction/extractions.ts';
import { seal } from '../llm/escrow.ts';
import { byokOf, type ByokKeys } from '../llm/port.ts';
import type { MessageRole } from './roles.ts';

export interface Message {
  role: MessageRole;
  content: string;
  // Who spoke, when the role is not enough (a user's name, a tool's).
  name?: string | undefined;
  occurredAt?: number | undefined;
}

export interface Conversation {
  messages: Message[];
  // The thread the messages join (metadata.parent_ref): this, else the run's id, else a new one.
  conversationId?: string | undefined;
  namespace?: string | undefined;
  tags?: string[] | undefined;
  metadata?: Metadata | undefined;
  userId?: string | undefined;
  agentId?: string | undefined;
  runId?: string | undefined;
  // Also extract the facts worth keeping (domain/extraction), in the background.
  infer?: boolean | undefined;
}

export interface Captured {
  conversationId: string;
  memories: MemoryView[];
  extraction: ExtractionView | null;
  replayed: boolean;
}

// A conversation's messages saved as the next chunks of its thread, in one transaction: each a memory with the
// single save's semantics (redaction, an event and an audit row each), its role (and name) in its metadata, its
// chunk_index following the thread's last. All or nothing: a message that cannot be saved fails the call, naming
// it, and a free org that cannot hold them all saves none. Concurrent calls on one thread take turns (a lock per
// thread), so their chunks never share an index.
export async function captureConversation(
  em: EntityManager,
  caller: Caller,
  input: Conversation,
  context: CreateContext,
): Promise<Captured> {
  const conversationId = input.conversationId ?? input.runId ?? `conv_${newId()}`;
  const saves: PendingSave[] = [];
  for (const [i, message] of input.messages.entries()) {
    try {
      saves.push(
        await newPendingSave(
          caller,
          {
            content: message.content,
            namespace: input.namespace,
            tags: input.tags,
            source: 'conversation',
            metadata: { ...input.metadata, role: message.role, ...(message.name !== undefined ? { name: message.name } : {}) },
            userId: input.userId,
            agentId: input.agentId,
            runId: input.runId,
            occurredAt: message.occurredAt,
          },
          context.llm,
        ),
      );
    } catch (err) {
      if (err instanceof AppError) throw new AppError(err.kind, err.error, `messages.${i}: ${err.detail ?? err.error}`, err.extra);
      throw err;
    }
  }
  return em.transactional(async (tx) => {
    const idempotency = context.idempotency;
    if (idempotency) {
      const claim = await claimIdempotencyKey<Omit<Captured, 'replayed'>>(tx, caller.orgId, idempotency.key, idempotency.requestHash);
      if (claim.replay) return { ...claim.replay, replayed: true };
    }
    const refusal = (
      await admitWithinQuota(
        tx,
        caller.orgId,
        caller.plan,
        saves.map((s) => s.bytes),
        context.upgradeUrl,
      )
    ).find((r) => r !== null);
    if (refusal) throw refusal;
    await query(tx, sql`select pg_advisory_xact_lock(hashtextextended(${`thread:${caller.orgId}:${conversationId}`}, 0))`);
    const next = (await lastChunkIndex(tx, caller.orgId, conversationId)) + 1;
    saves.forEach((s, i) => Object.assign(s.memory.metadata, { parent_ref: conversationId, chunk_index: next + i }));
    const extraction = input.infer ? extractionAfter(caller, saves.at(-1)!, byokOf(input.metadata), context.llm) : null;
    await writeSaves(tx, saves);
    const captured = {
      conversationId,
      memories: saves.map((s) => s.memory),
      extraction:
        extraction && (await recordExtraction(tx, caller, { ...extraction, conversationId, messageIds: saves.map((s) => s.memory.id) })),
    };
    if (idempotency) await storeIdempotentResult(tx, caller.orgId, idempotency.key, 201, captured);
    return { ...captured, replayed: false };
  });
}

// An extraction from the messages, run by the org's curator as an enrichment of the last one (paced with the org's
// other model calls), or recorded skipped at once when it cannot run: on the free plan without the caller's own
// key, or with no provider to call.
function extractionAfter(
  caller: Caller,
  last: PendingSave,
  byok: ByokKeys | undefined,
  access: LlmAccess | undefined,
): { id: string; skipped: string | null } {
  const id = newId();
  if (!access || !access.llm.configured(byok)) return { id, skipped: 'llm_not_configured' };
  if (caller.plan === 'free' && !byok) return { id, skipped: 'plan_required' };
  const escrow = last.enrichment?.escrow ?? (byok ? seal(access.escrowKey, newId(), caller.orgId, byok) : null);
  const { memory } = last;
  last.enrichment = {
    args: {
      orgId: caller.orgId,
      memoryId: memory.id,
      tasks: [...(last.enrichment?.args.tasks ?? []), 'extract'],
      contentHash: contentHash(memory.content),
      escrowId: escrow?.id ?? null,
    },
    escrow,
  };
  return { id, skipped: null };
}

// The highest chunk_index of the thread's chunks, superseded ones included (-1 for a new thread), read in thread
// order from its index.
async function lastChunkIndex(tx: EntityManager, orgId: string, ref: string): Promise<number> {
  const [last] = await query(
    tx,
    sql<{ chunk_index: number }>`select (m.metadata->>'chunk_index')::numeric as chunk_index from memories m
      where m.org_id = ${orgId} and m.metadata ? 'parent_ref' and m.metadata->>'parent_ref' = ${ref}
        and jsonb_typeof(m.metadata->'chunk_index') = 'number'
      order by ${threadOrder('m', 'desc')} limit 1`,
  );
  return last ? Math.floor(Number(last.chunk_index)) : -1;
}
