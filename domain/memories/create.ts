import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { auditInsert } from '../audit/record.ts';
import { countersUpsert } from '../counters.ts';
import { eventsInsert } from '../events/record.ts';
import { newId } from '../ids.ts';
import { termFrequencies } from '../search/analyzer.ts';
import { postingsInsert } from '../search/postings.ts';
import { query, sql } from '../sql.ts';
import { callerMetadata, prepareContent, withRedaction } from './content.ts';
import { createdDeltas } from './counters.ts';
import { claimIdempotencyKey, storeIdempotentResult } from './idempotency.ts';
import type { Metadata, MemoryView } from './model.ts';
import { DEFAULT_NAMESPACE, ensureNamespace } from './namespaces.ts';
import { checkCreateQuota } from './quota.ts';

export interface NewMemory {
  content: string;
  namespace?: string | undefined;
  tags?: string[] | undefined;
  source?: string | undefined;
  sourceRef?: string | null | undefined;
  metadata?: Metadata | undefined;
}

export interface CreateContext {
  upgradeUrl: string;
  idempotency?: { key: string; requestHash: string } | undefined;
}

export interface Created {
  memory: MemoryView;
  replayed: boolean;
}

// A save is one statement, hence one transaction: the memory, its postings (searchable at commit), the
// counters, the memory.saved event and the audit row. A free org's save and a save with an
// Idempotency-Key first take their lock or key in a transaction around that same statement.
export async function createMemory(em: EntityManager, caller: Caller, input: NewMemory, context: CreateContext): Promise<Created> {
  const prepared = prepareContent(input.content);
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
  };
  const save = async (db: EntityManager) => {
    const namespaceId = await ensureNamespace(db, caller.orgId, memory.namespace);
    await query(db, saveStatement(caller, memory, namespaceId, prepared.bytes));
  };
  if (caller.plan !== 'free' && !context.idempotency) {
    await save(em);
    return { memory, replayed: false };
  }
  return em.transactional(async (tx) => {
    if (context.idempotency) {
      const claim = await claimIdempotencyKey(tx, caller.orgId, context.idempotency.key, context.idempotency.requestHash);
      if (claim.replay) return { memory: claim.replay, replayed: true };
    }
    await checkCreateQuota(tx, caller.orgId, caller.plan, prepared.bytes, context.upgradeUrl);
    await save(tx);
    if (context.idempotency) await storeIdempotentResult(tx, caller.orgId, context.idempotency.key, memory);
    return { memory, replayed: false };
  });
}

function saveStatement(caller: Caller, memory: MemoryView, namespaceId: string, bytes: number) {
  const analyzed = termFrequencies(memory.content);
  const at = new Date(memory.createdAt).toISOString();
  const parts = [
    sql`saved as (insert into memories (id, org_id, namespace_id, content, content_bytes, doc_len, tags, source, source_ref, metadata, created_at, updated_at)
        values (${memory.id}, ${caller.orgId}, ${namespaceId}, ${memory.content}, ${bytes}, ${analyzed.length}, ${memory.tags}::text[],
                ${memory.source}, ${memory.sourceRef}, ${JSON.stringify(memory.metadata)}::jsonb, ${at}::timestamptz, ${at}::timestamptz))`,
    sql`counted as (${countersUpsert(createdDeltas({ orgId: caller.orgId, namespaceId, bytes, docLen: analyzed.length }))!})`,
    sql`evented as (${eventsInsert(caller.orgId, [{ type: 'memory.saved', data: memory }])})`,
    sql`audited as (${auditInsert({ orgId: caller.orgId, action: 'memory.save', targetId: memory.id, actor: actorOf(caller), details: { namespace: memory.namespace } })})`,
  ];
  if (analyzed.terms.size > 0) parts.push(sql`indexed as (${postingsInsert(caller.orgId, namespaceId, memory.id, analyzed)})`);
  return sql`with ${sql.join(parts, sql`, `)} select 1`;
}
