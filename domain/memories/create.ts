import type { EntityManager } from '@mikro-orm/postgresql';
import { actorOf, type Caller } from '../accounts/caller.ts';
import { recordAudit } from '../audit/record.ts';
import { recordEvents } from '../events/record.ts';
import { newId } from '../ids.ts';
import { indexContent } from '../search/postings.ts';
import { query, sql } from '../sql.ts';
import { callerMetadata, prepareContent, withRedaction } from './content.ts';
import { countCreated } from './counters.ts';
import { claimIdempotencyKey, storeIdempotentResult, type IdempotencyClaim } from './idempotency.ts';
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

// One transaction: the memory, its postings (searchable at commit), counters, the memory.saved event and
// the audit row; with an Idempotency-Key, also the stored answer that a retry gets back.
export async function createMemory(em: EntityManager, caller: Caller, input: NewMemory, context: CreateContext): Promise<Created> {
  const prepared = prepareContent(input.content);
  return em.transactional(async (tx) => {
    let claim: IdempotencyClaim | undefined;
    if (context.idempotency) {
      claim = await claimIdempotencyKey(tx, caller.orgId, context.idempotency.key, context.idempotency.requestHash);
      if (claim.replay) return { memory: claim.replay, replayed: true };
    }
    await checkCreateQuota(tx, caller.orgId, caller.plan, prepared.bytes, context.upgradeUrl);

    const namespace = input.namespace ?? DEFAULT_NAMESPACE;
    const namespaceId = await ensureNamespace(tx, caller.orgId, namespace);
    const id = newId();
    const metadata = withRedaction(callerMetadata(input.metadata), prepared);
    const tags = [...new Set(input.tags ?? [])];
    const docLen = await indexContent(tx, caller.orgId, id, prepared.content);
    const [row] = await query(
      tx,
      sql<{ created_at: string }>`insert into memories (id, org_id, namespace_id, content, content_bytes, doc_len, tags, source, source_ref, metadata, created_at, updated_at)
          values (${id}, ${caller.orgId}, ${namespaceId}, ${prepared.content}, ${prepared.bytes}, ${docLen}, ${tags}::text[],
                  ${input.source ?? 'agent'}, ${input.sourceRef ?? null}, ${JSON.stringify(metadata)}::jsonb, now(), now())
          returning created_at`,
    );
    const at = new Date(row!.created_at).getTime();
    const memory: MemoryView = {
      id,
      content: prepared.content,
      namespace,
      tags,
      source: input.source ?? 'agent',
      sourceRef: input.sourceRef ?? null,
      metadata,
      createdAt: at,
      updatedAt: at,
    };
    await countCreated(tx, { orgId: caller.orgId, namespaceId, bytes: prepared.bytes, docLen });
    await recordEvents(tx, caller.orgId, [{ type: 'memory.saved', data: memory }]);
    recordAudit(tx, { orgId: caller.orgId, action: 'memory.save', targetId: id, actor: actorOf(caller), details: { namespace } });
    if (claim) await storeIdempotentResult(tx, caller.orgId, claim.key, memory);
    return { memory, replayed: false };
  });
}
