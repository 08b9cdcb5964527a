import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../accounts/caller.ts';
import { scheduleEnrichment, type LlmAccess } from '../enrichment/schedule.ts';
import { byokOf } from '../llm/port.ts';
import { newId } from '../ids.ts';
import { callerMetadata, prepareContent, storedBytes, withRedaction } from './content.ts';
import { claimIdempotencyKey, storeIdempotentResult } from './idempotency.ts';
import type { Metadata, MemoryView } from '../store/model.ts';
import { DEFAULT_NAMESPACE } from '../store/namespaces.ts';
import { checkCreateQuota } from './quota.ts';
import { writeSaves, type PendingSave, type SaveBatcher } from './save-batch.ts';

export interface NewMemory {
  content: string;
  namespace?: string | undefined;
  tags?: string[] | undefined;
  source?: string | undefined;
  sourceRef?: string | null | undefined;
  metadata?: Metadata | undefined;
  userId?: string | undefined;
  agentId?: string | undefined;
  runId?: string | undefined;
  // Event time, epoch ms; the save's time when not given.
  occurredAt?: number | undefined;
}

export interface CreateContext {
  upgradeUrl: string;
  idempotency?: { key: string; requestHash: string } | undefined;
  // Group commit for saves that need no lock or key of their own (see save-batch.ts).
  batcher?: SaveBatcher | undefined;
  // Enables the background LLM work of a save (entities, synopsis, facts); absent, none is scheduled.
  llm?: LlmAccess | undefined;
}

export interface Created {
  memory: MemoryView;
  replayed: boolean;
}

// A new memory as it will be stored (content redacted, metadata cleaned) with the background work it asks for.
// Throws what the content fails with (413 `memory_too_large`, 400 `content required`).
export async function newPendingSave(caller: Caller, input: NewMemory, llm: LlmAccess | undefined): Promise<PendingSave> {
  const prepared = await prepareContent(input.content, caller.orgId);
  const now = Date.now();
  const memory: MemoryView = {
    id: newId(),
    content: prepared.content,
    namespace: input.namespace ?? DEFAULT_NAMESPACE,
    tags: [...new Set(input.tags ?? [])],
    source: input.source ?? 'agent',
    sourceRef: input.sourceRef ?? null,
    metadata: withRedaction(callerMetadata(input.metadata), prepared),
    createdAt: now,
    updatedAt: now,
    occurredAt: input.occurredAt ?? now,
    userId: input.userId ?? null,
    agentId: input.agentId ?? null,
    runId: input.runId ?? null,
  };
  const enrichment = scheduleEnrichment(llm, {
    plan: caller.plan,
    orgId: caller.orgId,
    memoryId: memory.id,
    content: memory.content,
    metadata: memory.metadata,
    byok: byokOf(input.metadata),
  });
  return { caller, memory, bytes: storedBytes(prepared.bytes, memory.metadata), enrichment };
}

// A save writes the memory, its postings (searchable at commit), counters, the memory.saved event and the
// audit row in one statement (save-batch.ts). A free org's save and a save with an Idempotency-Key first
// take their quota lock or key in a transaction around that same statement.
export async function createMemory(em: EntityManager, caller: Caller, input: NewMemory, context: CreateContext): Promise<Created> {
  const pending = await newPendingSave(caller, input, context.llm);
  const { memory } = pending;
  if (caller.plan !== 'free' && !context.idempotency) {
    await (context.batcher ? context.batcher.save(pending) : writeSaves(em, [pending]));
    return { memory, replayed: false };
  }
  return em.transactional(async (tx) => {
    if (context.idempotency) {
      const claim = await claimIdempotencyKey<MemoryView>(tx, caller.orgId, context.idempotency.key, context.idempotency.requestHash);
      if (claim.replay) return { memory: claim.replay, replayed: true };
    }
    await checkCreateQuota(tx, caller.orgId, caller.plan, pending.bytes, context.upgradeUrl);
    await writeSaves(tx, [pending]);
    if (context.idempotency) await storeIdempotentResult(tx, caller.orgId, context.idempotency.key, 201, memory);
    return { memory, replayed: false };
  });
}
