import type { EntityManager } from '@mikro-orm/postgresql';
import type { Embedder } from '../store/embedder.ts';
import { namespaceIdOf } from '../store/namespaces.ts';
import { termFrequencies } from '../store/analyzer.ts';
import { query, sql, toDate } from '../sql.ts';
import { knownPairs, type NewProposal } from './proposals.ts';
import { parseVector } from '../store/vectors.ts';

// Lexical consolidation over the analyzed terms (the search analyzer: stems, no stopwords) of the most
// recently updated memories, pairs only within one namespace:
// - duplicate: Jaccard similarity of the two term sets >= threshold;
// - stale: not a duplicate, but the older memory's terms are contained in a newer one's >= threshold
//   (the newer memory restates it and says more);
// - contradiction candidates: topic overlap (Jaccard >= threshold / 2) without either of the above; a model
//   decides whether they contradict.
// And by meaning, over the same memories' vectors (when a model is given): a pair that the words did not
// pair but whose cosine similarity is at least max(threshold, the model's floor) is proposed as a duplicate,
// with a note saying so. Cosines are compressed (bge: unrelated texts score 0.3-0.5, paraphrases 0.87-0.95),
// hence the floor: SEMANTIC_DUPLICATE_MIN unless the model names its own (Embedder.nearDuplicate). A reviewer
// decides, since similar meaning also covers updates ("PostgreSQL 15" against "PostgreSQL 16" scores 0.94).
const DETECT_SCAN_LIMIT = 2000;
const SEMANTIC_DUPLICATE_MIN = 0.9;
const CONTRADICTION_CHECKS_MAX = 20;
const PROPOSALS_PER_RUN_MAX = 1000;
export const DEFAULT_THRESHOLD = 0.8;
// Only this much of a memory is analyzed: enough to judge overlap, bounded for very long memories.
const ANALYZED_CHARS = 20_000;

interface Scanned {
  id: string;
  namespaceId: string;
  createdAt: number;
  terms: Set<string>;
}

export interface ContradictionCandidate {
  memoryAId: string;
  memoryBId: string;
  namespaceId: string;
  score: number;
}

export interface Candidates {
  scanned: number;
  proposals: NewProposal[];
  contradictions: ContradictionCandidate[];
  alreadyKnown: number;
}

const ordered = (x: Scanned, y: Scanned): [Scanned, Scanned] => (x.id < y.id ? [x, y] : [y, x]);

// Candidate pairs through an inverted index over the scanned memories; terms shared by very many memories
// (df above 2% of them, at least 20) propose no pairs on their own, which keeps the work near-linear.
function overlappingPairs(items: Scanned[]): Map<string, [number, number]> {
  const postings = new Map<string, number[]>();
  items.forEach((item, i) => {
    for (const term of item.terms) {
      const list = postings.get(term);
      if (list) list.push(i);
      else postings.set(term, [i]);
    }
  });
  const maxDf = Math.max(20, Math.ceil(items.length * 0.02));
  const pairs = new Map<string, [number, number]>();
  for (const list of postings.values()) {
    if (list.length < 2 || list.length > maxDf) continue;
    for (let x = 0; x < list.length; x++) {
      for (let y = x + 1; y < list.length; y++) {
        const i = list[x]!;
        const j = list[y]!;
        if (items[i]!.namespaceId === items[j]!.namespaceId) pairs.set(`${i}/${j}`, [i, j]);
      }
    }
  }
  return pairs;
}

function intersection(a: Set<string>, b: Set<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let n = 0;
  for (const t of small) if (large.has(t)) n++;
  return n;
}

// Memories with the same analyzed terms in one project are exact duplicates of the oldest of them: each is
// paired with that one (n - 1 pairs, not n^2/2), and only the oldest takes part in the pairing below, which
// would otherwise skip terms that many copies share.
function exactDuplicates(items: Scanned[]): { representatives: Scanned[]; pairs: [Scanned, Scanned][] } {
  const groups = new Map<string, Scanned[]>();
  for (const item of items) {
    const key = `${item.namespaceId} ${[...item.terms].sort().join(' ')}`;
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  const representatives: Scanned[] = [];
  const pairs: [Scanned, Scanned][] = [];
  for (const group of groups.values()) {
    group.sort((x, y) => x.createdAt - y.createdAt || (x.id < y.id ? -1 : 1));
    representatives.push(group[0]!);
    for (const copy of group.slice(1)) pairs.push([group[0]!, copy]);
  }
  return { representatives, pairs };
}

// The scanned memories' vectors of `model`, as unit vectors by memory id: their texts' own, without the context a
// chunk of a thread is searched with (what two memories say is what makes them duplicates).
async function vectorsOf(em: EntityManager, orgId: string, ids: string[], model: string): Promise<Map<string, Float32Array>> {
  const rows = await query(
    em,
    sql<{
      memory_id: string;
      embedding: string;
    }>`select memory_id, coalesce(text_embedding, embedding)::text as embedding from memory_embeddings
      where org_id = ${orgId} and memory_id = any(${ids}::uuid[]) and passage = 0 and model = ${model}`,
  );
  return new Map(rows.map((r) => [r.memory_id, parseVector(r.embedding)]));
}

// Pairs within one project whose vectors are at least `min` similar: a plain all-pairs scan, which for the
// 2,000 memories of a run is about 2M dot products (well under a second).
function similarPairs(items: Scanned[], vectors: Map<string, Float32Array>, min: number): { x: Scanned; y: Scanned; cosine: number }[] {
  const withVector = items.filter((s) => vectors.has(s.id));
  const out: { x: Scanned; y: Scanned; cosine: number }[] = [];
  for (let i = 0; i < withVector.length; i++) {
    const x = withVector[i]!;
    const vx = vectors.get(x.id)!;
    for (let j = i + 1; j < withVector.length; j++) {
      const y = withVector[j]!;
      if (x.namespaceId !== y.namespaceId) continue;
      const vy = vectors.get(y.id)!;
      let dot = 0;
      for (let d = 0; d < vx.length; d++) dot += vx[d]! * vy[d]!;
      if (dot >= min) out.push({ x, y, cosine: dot });
    }
  }
  return out;
}

export async function findCandidates(
  em: EntityManager,
  orgId: string,
  namespace: string | undefined,
  threshold: number,
  embedder: Pick<Embedder, 'model' | 'nearDuplicate'> | null = null,
): Promise<Candidates> {
  let namespaceId: string | null = null;
  if (namespace !== undefined) {
    namespaceId = await namespaceIdOf(em, orgId, namespace);
    // Like the list routes, a project that does not exist simply holds nothing.
    if (!namespaceId) return { scanned: 0, proposals: [], contradictions: [], alreadyKnown: 0 };
  }
  const rows = await query(
    em,
    sql<{ id: string; namespace_id: string; created_at: string; text: string }>`
      select id, namespace_id, created_at, left(content, ${ANALYZED_CHARS}) as text from memories
       where org_id = ${orgId} and superseded_by is null ${namespaceId ? sql`and namespace_id = ${namespaceId}` : sql``}
       order by updated_at desc, id desc limit ${DETECT_SCAN_LIMIT}`,
  );
  const items: Scanned[] = rows
    .map((r) => ({
      id: r.id,
      namespaceId: r.namespace_id,
      createdAt: toDate(r.created_at).getTime(),
      terms: new Set(termFrequencies(r.text).terms.keys()),
    }))
    .filter((s) => s.terms.size > 0);
  const known = await knownPairs(
    em,
    orgId,
    items.map((s) => s.id),
  );
  const proposals: NewProposal[] = [];
  const contradictions: ContradictionCandidate[] = [];
  let alreadyKnown = 0;
  const judge = (x: Scanned, y: Scanned) => {
    const [a, b] = ordered(x, y);
    const shared = intersection(a.terms, b.terms);
    const jaccard = shared / (a.terms.size + b.terms.size - shared);
    const [older, newer] = a.createdAt <= b.createdAt ? [a, b] : [b, a];
    const containment = shared / older.terms.size;
    const kind =
      jaccard >= threshold
        ? 'duplicate'
        : containment >= threshold && newer.terms.size > older.terms.size
          ? 'stale'
          : jaccard >= threshold / 2
            ? 'contradiction'
            : null;
    if (!kind) return;
    if (known.has(`${a.id}/${b.id}`)) {
      alreadyKnown++;
      return;
    }
    const pair = { memoryAId: a.id, memoryBId: b.id, namespaceId: a.namespaceId };
    if (kind === 'duplicate') proposals.push({ ...pair, kind, score: round(jaccard), note: null });
    else if (kind === 'stale')
      proposals.push({ ...pair, kind, score: round(containment), note: `older memory ${older.id} is restated by the newer ${newer.id}` });
    else contradictions.push({ ...pair, score: round(jaccard) });
  };
  const exact = exactDuplicates(items);
  for (const [x, y] of exact.pairs) judge(x, y);
  for (const [i, j] of overlappingPairs(exact.representatives).values()) judge(exact.representatives[i]!, exact.representatives[j]!);
  if (embedder) {
    const { model, nearDuplicate = SEMANTIC_DUPLICATE_MIN } = embedder;
    const judged = new Set([...proposals, ...contradictions].map((p) => `${p.memoryAId}/${p.memoryBId}`));
    for (const { x, y, cosine } of similarPairs(
      exact.representatives,
      await vectorsOf(
        em,
        orgId,
        exact.representatives.map((s) => s.id),
        model,
      ),
      Math.max(threshold, nearDuplicate),
    )) {
      const [a, b] = ordered(x, y);
      const key = `${a.id}/${b.id}`;
      if (judged.has(key)) continue;
      if (known.has(key)) {
        alreadyKnown++;
        continue;
      }
      proposals.push({
        memoryAId: a.id,
        memoryBId: b.id,
        namespaceId: a.namespaceId,
        kind: 'duplicate',
        score: round(cosine),
        note: `similar in meaning (cosine similarity ${round(cosine)}), not in words`,
      });
    }
  }
  // The strongest pairs first; the rest are found again by the next run.
  proposals.sort((x, y) => y.score - x.score);
  contradictions.sort((x, y) => y.score - x.score);
  return {
    scanned: rows.length,
    proposals: proposals.slice(0, PROPOSALS_PER_RUN_MAX),
    contradictions: contradictions.slice(0, CONTRADICTION_CHECKS_MAX),
    alreadyKnown,
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
