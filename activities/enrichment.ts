import type { MikroORM } from '@mikro-orm/postgresql';
import type { EnrichmentOutcome } from '../domain/enrichment/store.ts';
import { enrichmentSubject, storeEntities, storeFacts, storeSynopsis } from '../domain/enrichment/store.ts';
import { entitiesTask, factsTask, synopsisTask } from '../domain/enrichment/tasks.ts';
import { releaseKeys, withdrawKeys } from '../domain/llm/escrow.ts';
import type { ByokKeys, Llm } from '../domain/llm/port.ts';
import { asActivity } from './failures.ts';
import type { Enrichment } from '../domain/store/curate.ts';

export interface LlmActivityDeps {
  orm: MikroORM;
  llm: Llm;
  escrowKey: Buffer;
}

export interface EnrichInput {
  orgId: string;
  memoryId: string;
  task: Enrichment;
  contentHash: string;
  escrowId: string | null;
}

// The caller's sealed keys for work started with BYOK; null when they are gone (the hour ran out).
export async function keysFor(deps: LlmActivityDeps, orgId: string, escrowId: string | null): Promise<ByokKeys | undefined | null> {
  if (!escrowId) return undefined;
  return withdrawKeys(deps.orm.em.fork(), deps.escrowKey, escrowId, orgId);
}

export function enrichmentActivities(deps: LlmActivityDeps) {
  const { orm, llm } = deps;
  return {
    // One enrichment of one memory: an idempotent read, one model call, one guarded write. Provider outages
    // are retried by the workflow's policy; a refused key or malformed answer is final (asActivity).
    async enrichMemory(input: EnrichInput): Promise<EnrichmentOutcome> {
      return asActivity(async () => {
        const em = orm.em.fork();
        const content = await enrichmentSubject(em, input.orgId, input.memoryId, input.contentHash);
        if (content === null) return 'skipped';
        const byok = await keysFor(deps, input.orgId, input.escrowId);
        if (byok === null) return 'skipped';
        let stored: boolean;
        if (input.task === 'entities') {
          const { value } = await llm.run(entitiesTask(content), byok);
          await storeEntities(em, input.orgId, input.memoryId, value.entities);
          stored = true;
        } else if (input.task === 'synopsis') {
          const { value } = await llm.run(synopsisTask(content), byok);
          stored = await storeSynopsis(em, input.orgId, input.memoryId, input.contentHash, value.synopsis);
        } else {
          const { value } = await llm.run(factsTask(content), byok);
          stored = await storeFacts(em, input.orgId, input.memoryId, input.contentHash, value.facts);
        }
        return stored ? 'stored' : 'skipped';
      });
    },
    async releaseLlmKeys(input: { orgId: string; escrowId: string }): Promise<void> {
      await releaseKeys(orm.em.fork(), input.orgId, input.escrowId);
    },
  };
}
