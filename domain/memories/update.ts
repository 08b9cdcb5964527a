import { byteLength, HISTORY_ENTRIES_KEPT, MAX_METADATA_JSON } from './limits.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { auditInsert } from '../audit/record.ts';
import { recordEvents } from '../webhooks/event-log.ts';
import { conflict, invalid, notFound } from '../errors.ts';
import { patchObject } from '../metadata.ts';
import { indexContent, moveIndexedMemory, unindexMemories } from '../store/postings.ts';
import { curateJob } from '../store/curate.ts';
import { remixChunksAfter } from '../store/thread-context.ts';
import { scheduleEnrichment, type LlmAccess } from '../enrichment/schedule.ts';
import { byokOf } from '../llm/port.ts';
import { escrowInsert } from '../llm/escrow.ts';
import { enqueueJobs } from '../outbox/enqueue.ts';
import { query, queryOne, sql, toDate } from '../sql.ts';
import { callerMetadata, prepareContent, storedBytes, withRedaction, type PreparedContent } from './content.ts';
import { replacedDeltas } from '../store/counters.ts';
import { countersUpsert } from '../counters.ts';
import { MEMORIES_IN_NAMESPACES, memoryRecord, type Metadata, type MemoryView, type Scopes } from '../store/model.ts';
import { ensureNamespace } from '../store/namespaces.ts';
import { checkStorageGrowth } from './quota.ts';
import { forgetEmbeddings } from '../store/vectors.ts';

export interface MemoryPatch {
  content?: string | undefined;
  tags?: string[] | undefined;
  namespace?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  // A scope set to null is removed.
  userId?: string | null | undefined;
  agentId?: string | null | undefined;
  runId?: string | null | undefined;
  // Event time, epoch ms.
  occurredAt?: number | undefined;
}

interface CurrentRow {
  content: string;
  stored_bytes: number;
  doc_len: number;
  tags: string[];
  source: string;
  source_ref: string | null;
  metadata: Metadata;
  namespace_id: string;
  namespace: string;
  created_at: string;
  occurred_at: string | null;
  superseded_by: string | null;
  user_id: string | null;
  agent_id: string | null;
  run_id: string | null;
}

// One memory's update in the caller's transaction: content (re-indexed, a history entry when it changes),
// tags (replaced), namespace (moved, created if missing), metadata (merged); then memory.updated and audit.
export interface UpdateContext {
  upgradeUrl: string;
  // Enables re-running the background LLM work when content changes; absent, none is scheduled.
  llm?: LlmAccess | undefined;
}

// A patch whose content is prepared (redacted, its size known) before the transaction opens.
type PreparedPatch = Omit<MemoryPatch, 'content'> & { content?: PreparedContent | undefined };

async function applyPatch(
  tx: EntityManager,
  caller: Caller,
  id: string,
  patch: PreparedPatch,
  context: UpdateContext,
): Promise<MemoryView> {
  const current = await queryOne(
    tx,
    sql<CurrentRow>`select m.content, m.stored_bytes, m.doc_len, m.tags, m.source, m.source_ref, m.metadata, m.namespace_id,
          n.name as namespace, m.created_at, m.occurred_at, m.superseded_by,
          m.user_id, m.agent_id, m.run_id
        from ${MEMORIES_IN_NAMESPACES}
        where m.id = ${id} and m.org_id = ${caller.orgId} for update of m`,
  );
  if (!current) throw notFound('memory', id);
  // A merged original is kept for the record; its successor is the memory to edit.
  if (current.superseded_by) throw conflict('memory_superseded', `this memory was merged into ${current.superseded_by}; edit that one`);

  // Server-owned and BYOK keys are not the caller's to set.
  let metadata = patch.metadata ? patchObject(current.metadata, callerMetadata(patch.metadata)) : current.metadata;
  // A patch is checked on its own (the schema); what it makes of the stored metadata is checked here (one that
  // shrinks metadata saved over the limit before the limit held goes through).
  const merged = patch.metadata ? JSON.stringify(callerMetadata(metadata)).length : 0;
  if (merged > MAX_METADATA_JSON && merged > JSON.stringify(callerMetadata(current.metadata)).length) {
    throw invalid(
      'metadata_too_large',
      `metadata would hold ${merged} characters of JSON after this change, over the limit of ${MAX_METADATA_JSON}`,
      { max_chars: MAX_METADATA_JSON, received_chars: merged },
    );
  }
  let content = current.content;
  let docLen = current.doc_len;
  const fields = Object.keys(patch).filter((k) => patch[k as keyof PreparedPatch] !== undefined);

  const namespace = patch.namespace ?? current.namespace;
  const namespaceId =
    patch.namespace !== undefined && patch.namespace !== current.namespace
      ? await ensureNamespace(tx, caller.orgId, patch.namespace)
      : current.namespace_id;
  const prepared = patch.content;
  if (prepared !== undefined) {
    if (prepared.content !== current.content) {
      await unindexMemories(tx, caller.orgId, [id]);
      docLen = await indexContent(tx, caller.orgId, id, prepared.content);
      // Semantic search forgets the old text now and learns the new one when the curator has embedded it.
      await forgetEmbeddings(tx, caller.orgId, [id]);
      const entry = {
        at: Date.now(),
        prev_content_len: [...current.content].length,
        by_user: caller.userId,
        by_token: caller.credentialId,
      };
      const history: unknown[] = Array.isArray(current.metadata.history) ? current.metadata.history : [];
      // A synopsis and facts describe the text they were drawn from, so they go with it.
      const { synopsis: _synopsis, facts: _facts, ...kept } = withRedaction(metadata, prepared);
      metadata = { ...kept, history: [...history, entry].slice(-HISTORY_ENTRIES_KEPT) };
      const enrichment = scheduleEnrichment(context.llm, {
        plan: caller.plan,
        orgId: caller.orgId,
        memoryId: id,
        content: prepared.content,
        metadata,
        byok: byokOf(patch.metadata),
      });
      await enqueueJobs(tx, [curateJob(caller.orgId, [id], enrichment ? [enrichment.args] : [])]);
      if (enrichment?.escrow) await query(tx, escrowInsert([enrichment.escrow]));
      content = prepared.content;
    }
  }
  const tags = patch.tags !== undefined ? [...new Set(patch.tags)] : current.tags;
  const occurredAt = patch.occurredAt ?? toDate(current.occurred_at ?? current.created_at).getTime();
  const scopes: Scopes = {
    userId: patch.userId !== undefined ? patch.userId : current.user_id,
    agentId: patch.agentId !== undefined ? patch.agentId : current.agent_id,
    runId: patch.runId !== undefined ? patch.runId : current.run_id,
  };
  if (
    namespaceId !== current.namespace_id ||
    scopes.userId !== current.user_id ||
    scopes.agentId !== current.agent_id ||
    scopes.runId !== current.run_id
  ) {
    await moveIndexedMemory(tx, caller.orgId, id, {
      namespace_id: namespaceId,
      user_id: scopes.userId,
      agent_id: scopes.agentId,
      run_id: scopes.runId,
    });
  }
  // A chunk moved into, out of or within a thread: its vector and those of the chunks after its old place are mixed
  // with their new context by the curator (domain/store/thread-context.ts).
  if (['parent_ref', 'chunk_index'].some((key) => JSON.stringify(current.metadata[key]) !== JSON.stringify(metadata[key]))) {
    await remixChunksAfter(tx, caller.orgId, [id], [id]);
  }

  // What it will occupy, content and metadata: growth counts against a free org's storage.
  const bytes = storedBytes(byteLength(content), metadata);
  if (bytes > current.stored_bytes)
    await checkStorageGrowth(tx, caller.orgId, caller.plan, bytes - current.stored_bytes, context.upgradeUrl);
  // The counters and the audit row go in the update's own statement: a batch of updates makes one round trip a row
  // fewer for each.
  const counted = countersUpsert(
    replacedDeltas(
      { orgId: caller.orgId, namespaceId: current.namespace_id, bytes: current.stored_bytes, docLen: current.doc_len },
      { orgId: caller.orgId, namespaceId, bytes, docLen },
    ),
  );
  const audit = { orgId: caller.orgId, action: 'memory.update', targetId: id, actor: actorOf(caller), details: { fields } };
  const audited = auditInsert([audit]);
  const updated = await queryOne(
    tx,
    sql<{
      updated_at: string;
    }>`with audited as (${audited}) ${counted ? sql`, counted as (${counted})` : sql``}
        update memories set content = ${content}, stored_bytes = ${bytes}, doc_len = ${docLen}, tags = ${tags}::text[],
          namespace_id = ${namespaceId}, metadata = ${JSON.stringify(metadata)}::jsonb,
          user_id = ${scopes.userId}, agent_id = ${scopes.agentId}, run_id = ${scopes.runId},
            occurred_at = ${new Date(occurredAt).toISOString()}::timestamptz,
          updated_at = greatest(now(), updated_at + interval '1 millisecond')
        where org_id = ${caller.orgId} and id = ${id} returning updated_at`,
  );
  const memory: MemoryView = {
    id,
    content,
    namespace,
    tags,
    source: current.source,
    sourceRef: current.source_ref,
    metadata,
    createdAt: toDate(current.created_at).getTime(),
    updatedAt: toDate(updated!.updated_at).getTime(),
    occurredAt,
    ...scopes,
  };
  await recordEvents(tx, [{ orgId: caller.orgId, type: 'memory.updated', data: memoryRecord(memory) }]);
  return memory;
}

export async function updateMemory(
  em: EntityManager,
  caller: Caller,
  id: string,
  patch: MemoryPatch,
  context: UpdateContext,
): Promise<MemoryView> {
  const content = patch.content === undefined ? undefined : await prepareContent(patch.content, caller.orgId);
  return em.transactional((tx) => applyPatch(tx, caller, id, { ...patch, content }, context));
}
