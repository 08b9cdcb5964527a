import type { EntityManager } from '@mikro-orm/postgresql';
import { bumpCounters, sumDeltas, type CounterDelta } from '../counters.ts';

// What one memory contributes to the counters of its org and namespace.
export interface Footprint {
  orgId: string;
  namespaceId: string;
  bytes: number;
  docLen: number;
}

export const ORG_COUNTERS = { created: 'memories_created', live: 'memories', bytes: 'content_bytes', docLen: 'doc_len' } as const;
export const NAMESPACE_MEMORIES = 'memories';

function deltas(f: Footprint, sign: 1 | -1): CounterDelta[] {
  return [
    { scopeId: f.orgId, name: ORG_COUNTERS.live, delta: sign },
    { scopeId: f.orgId, name: ORG_COUNTERS.bytes, delta: sign * f.bytes },
    { scopeId: f.orgId, name: ORG_COUNTERS.docLen, delta: sign * f.docLen },
    { scopeId: f.namespaceId, name: NAMESPACE_MEMORIES, delta: sign },
  ];
}

export const createdDeltas = (f: Footprint): CounterDelta[] => [...deltas(f, 1), { scopeId: f.orgId, name: ORG_COUNTERS.created, delta: 1 }];

export async function countReplaced(em: EntityManager, before: Footprint, after: Footprint): Promise<void> {
  await bumpCounters(em, sumDeltas([...deltas(before, -1), ...deltas(after, 1)]));
}

export async function countDeleted(em: EntityManager, f: Footprint): Promise<void> {
  await bumpCounters(em, deltas(f, -1));
}
