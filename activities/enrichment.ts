import type { MikroORM } from '@mikro-orm/postgresql';
import type { EnrichmentOutcome } from '../domain/enrichment/store.ts';
import { enrichmentSubject, storeEntities, storeFacts, storeSynopsis } from '../domain/enrichment/store.ts';
import { entitiesTask, factsTask, synopsisTask } from '../domain/enrichment/tasks.ts';
import { releaseKeys, withdrawKeys } from '../domain/llm/escrow.ts';
import type { ByokKeys, Llm } from '../domain/llm/port.ts';
import { Context } from '@temporalio/activity';
import { AppError } from '../domain/errors.ts';
import { abandonExtraction, runExtraction } from '../domain/extraction/run.ts';
import { QueryVectors } from '../domain/search/query-vectors.ts';
import type { Embedder } from '../domain/store/embedder.ts';
import { asActivity } from './failures.ts';
import type { Enrichment } from '../domain/store/curate.ts';

export interface LlmActivityDeps {
  orm: MikroORM;
  llm: Llm;
  escrowKey: Buffer;
  // Query vectors for extraction's search of the existing memories (null: words only).
  embedder: Embedder | null;
  extractionTokensPerMonth: number;
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
  const vectors = deps.embedder ? new QueryVectors(deps.embedder, 0) : null;
  const extract = async (input: EnrichInput): Promise<EnrichmentOutcome> => {
    const em = orm.em.fork();
    const byok = await keysFor(deps, input.orgId, input.escrowId);
    if (byok === null) {
      await abandonExtraction(em, input.orgId, input.memoryId, 'keys_expired');
      return 'skipped';
    }
    try {
      return await runExtraction(em, { llm, byok, vectors, tokensPerMonth: deps.extractionTokensPerMonth }, input.orgId, input.memoryId);
    } catch (err) {
      // An extraction still failing (the provider unavailable) at the retry policy's last attempt ends failed, so
      // that it does not stay queued.
      const { attempt, retryPolicy } = Context.current().info;
      if (retryPolicy?.maximumAttempts && attempt >= retryPolicy.maximumAttempts)
        await abandonExtraction(em, input.orgId, input.memoryId, err instanceof AppError ? err.error : 'extraction_error');
      throw err;
    }
  };
  return {
    // One enrichment of one memory: an idempotent read, one model call, one guarded write. Provider outages
    // are retried by the workflow's policy; a refused key or malformed answer is final (asActivity).
    async enrichMemory(input: EnrichInput): Promise<EnrichmentOutcome> {
      return asActivity(async () => {
        const em = orm.em.fork();
        if (input.task === 'extract') return extract(input);
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
