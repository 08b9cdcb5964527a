import { createHash } from 'node:crypto';
import type { Plan } from '../accounts/enums.ts';
import { newId } from '../ids.ts';
import { seal, type Sealed } from '../llm/escrow.ts';
import type { ByokKeys, Llm } from '../llm/port.ts';
import type { Metadata } from '../store/model.ts';
import type { Enrichment, EnrichmentArgs } from '../store/curate.ts';

// Content at least this long gets entity extraction without being asked.
const ENTITY_EXTRACTION_MIN_CHARS = 200;

export interface LlmAccess {
  llm: Llm;
  escrowKey: Buffer;
}

export const contentHash = (content: string): string => createHash('md5').update(content).digest('hex');

function requestedEnrichments(content: string, metadata: Metadata): Enrichment[] {
  const tasks: Enrichment[] = [];
  if ([...content].length >= ENTITY_EXTRACTION_MIN_CHARS || metadata.extract_entities === true) tasks.push('entities');
  if (metadata.summarize === true) tasks.push('synopsis');
  if (metadata.extract_facts === true) tasks.push('facts');
  return tasks;
}

// The work for the org's curator (domain/store/curate.ts), and the caller's sealed keys to store with it.
export interface ScheduledEnrichment {
  args: EnrichmentArgs;
  escrow: Sealed | null;
}

export interface EnrichmentSubject {
  plan: Plan;
  orgId: string;
  memoryId: string;
  content: string;
  // The memory's metadata (its extract_entities, summarize and extract_facts flags).
  metadata: Metadata;
  // The request's own keys, if any.
  byok: ByokKeys | undefined;
}

// The background work a memory's content gets, after its save and after each content change: only on a
// paid plan or with the caller's own key, and only when a provider can be called. It runs in the org's
// curator workflow, which paces the org's model calls. The caller's keys travel sealed (domain/llm/escrow.ts),
// never in the signal.
export function scheduleEnrichment(access: LlmAccess | undefined, s: EnrichmentSubject): ScheduledEnrichment | null {
  if (!access) return null;
  if (s.plan === 'free' && !s.byok) return null;
  if (!access.llm.configured(s.byok)) return null;
  const tasks = requestedEnrichments(s.content, s.metadata);
  if (tasks.length === 0) return null;
  const escrow = s.byok ? seal(access.escrowKey, newId(), s.orgId, s.byok) : null;
  return {
    args: { orgId: s.orgId, memoryId: s.memoryId, tasks, contentHash: contentHash(s.content), escrowId: escrow?.id ?? null },
    escrow,
  };
}
