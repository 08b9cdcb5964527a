import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../audit/record.ts';
import { recordMentions, unlinkExtraction } from '../entities/mentions.ts';
import { queryOne, sql } from '../sql.ts';

// Results of background enrichment land on the memory they were drawn from, and only while it still has
// the content they were drawn from: a memory edited, merged away or deleted meanwhile is left alone.
// They change no updated_at and fire no memory.updated: they are the server's annotations, not an edit.

const SYSTEM = { userId: null, credentialId: null };

// The content to enrich, or null when the memory no longer has the content the work was scheduled for.
export async function enrichmentSubject(em: EntityManager, orgId: string, memoryId: string, contentHash: string): Promise<string | null> {
  const row = await queryOne(
    em,
    sql<{
      content: string;
    }>`select content from memories where id = ${memoryId} and org_id = ${orgId} and superseded_by is null
        and md5(content) = ${contentHash}`,
  );
  return row?.content ?? null;
}

// metadata.synopsis (a string) or metadata.facts (an array of strings), merged without touching other keys.
async function annotate(
  em: EntityManager,
  orgId: string,
  memoryId: string,
  contentHash: string,
  key: 'synopsis' | 'facts',
  value: unknown,
): Promise<boolean> {
  return em.transactional(async (tx) => {
    const row = await queryOne(
      tx,
      sql<{ id: string }>`update memories set metadata = metadata || jsonb_build_object(${key}::text, ${JSON.stringify(value)}::jsonb)
        where id = ${memoryId} and org_id = ${orgId} and superseded_by is null and md5(content) = ${contentHash} returning id`,
    );
    if (row) await recordAudit(tx, { orgId, action: `memory.${key}`, targetId: memoryId, actor: SYSTEM });
    return Boolean(row);
  });
}

export const storeSynopsis = (em: EntityManager, orgId: string, memoryId: string, contentHash: string, synopsis: string) =>
  annotate(em, orgId, memoryId, contentHash, 'synopsis', synopsis);

export const storeFacts = (em: EntityManager, orgId: string, memoryId: string, contentHash: string, facts: string[]) =>
  annotate(em, orgId, memoryId, contentHash, 'facts', facts);

// Replaces the links an earlier extraction made (the content changed since) with the ones found now;
// linking is idempotent per memory, so a retried activity counts nothing twice.
export async function storeEntities(
  em: EntityManager,
  orgId: string,
  memoryId: string,
  mentions: { name: string; type: string; aliases: string[] }[],
): Promise<void> {
  await unlinkExtraction(em, orgId, memoryId);
  await recordMentions(em, orgId, memoryId, mentions, new Date());
}

export type EnrichmentOutcome = 'stored' | 'skipped';
