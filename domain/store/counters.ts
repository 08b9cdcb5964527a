import type { EntityManager } from '@mikro-orm/postgresql';
import { bumpCounters, sumDeltas, type CounterDelta } from '../counters.ts';

// What one memory contributes to the counters of its org and namespace.
export interface Footprint {
  orgId: string;
  namespaceId: string;
  bytes: number;
  docLen: number;
}

export const ORG_COUNTERS = { created: 'memories_created', live: 'memories', bytes: 'stored_bytes', docLen: 'doc_len' } as const;
// A namespace's live memories and their total length (BM25's N and average length when a hybrid search's
// statistics are the namespace's, domain/search/lexical.ts).
export const NAMESPACE_COUNTERS = { live: 'memories', docLen: 'doc_len' } as const;

function deltas(f: Footprint, sign: 1 | -1): CounterDelta[] {
  return [
    { orgId: f.orgId, scopeId: f.orgId, name: ORG_COUNTERS.live, delta: sign },
    { orgId: f.orgId, scopeId: f.orgId, name: ORG_COUNTERS.bytes, delta: sign * f.bytes },
    { orgId: f.orgId, scopeId: f.orgId, name: ORG_COUNTERS.docLen, delta: sign * f.docLen },
    { orgId: f.orgId, scopeId: f.namespaceId, name: NAMESPACE_COUNTERS.live, delta: sign },
    { orgId: f.orgId, scopeId: f.namespaceId, name: NAMESPACE_COUNTERS.docLen, delta: sign * f.docLen },
  ];
}

export const createdDeltas = (f: Footprint): CounterDelta[] => [
  ...deltas(f, 1),
  { orgId: f.orgId, scopeId: f.orgId, name: ORG_COUNTERS.created, delta: 1 },
];

// What a memory's change from `before` to `after` adds to the counters, summed per counter (all zero when it moved
// nothing and kept its size, which countersUpsert then leaves out).
export const replacedDeltas = (before: Footprint, after: Footprint): CounterDelta[] =>
  sumDeltas([...deltas(before, -1), ...deltas(after, 1)]);

// A superseded memory already left the live counts when it was merged (supersededDeltas); only its bytes remain.
export async function countDeleted(em: EntityManager, deleted: { footprint: Footprint; superseded: boolean }[]): Promise<void> {
  const all = deleted.flatMap(({ footprint: f, superseded }) =>
    superseded ? [{ orgId: f.orgId, scopeId: f.orgId, name: ORG_COUNTERS.bytes, delta: -f.bytes }] : deltas(f, -1),
  );
  await bumpCounters(em, sumDeltas(all));
}

// A memory merged away leaves search and the live counts but still occupies storage.
export const supersededDeltas = (f: Footprint): CounterDelta[] => deltas(f, -1).filter((d) => d.name !== ORG_COUNTERS.bytes);
