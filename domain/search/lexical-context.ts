import type { EntityManager } from '@mikro-orm/postgresql';
import { chunksAfterNamed } from '../store/thread-context.ts';
import type { CompiledFilters } from '../store/filters.ts';
import { query } from '../sql.ts';
import { byRank, type Ranked } from './fusion.ts';

// Hybrid's lexical list reads a chunk of a thread with the chunks before it, as search by meaning does with their
// vectors (domain/store/thread-context.ts): each of the two live chunks after a memory of the list
// gains a share of that memory's BM25 score, CONTEXT_SHARES[i] for the (i + 1)-th after it. "Biscuit! He already
// knows how to sit." shares no word with "what is Riley's dog called", but follows a turn that has "dog". Only the
// list's own scores are known, so only its memories pass a share on, and a chunk outside it starts from 0. On
// LoCoMo's conversations the shares raised hybrid's evidence recall; they were the best of the pairs tried offline.
export const CONTEXT_SHARES = [0.2, 0.1] as const;

// The list with the shares added, best first (ties by id), cut to `n`. A chunk that gains a share must pass the
// search's filter, as every hit must.
export async function withThreadContext(em: EntityManager, orgId: string, list: Ranked[], n: number, compiled: CompiledFilters): Promise<Ranked[]> {
  if (list.length === 0) return list;
  const rows = await query(em, chunksAfterNamed(orgId, list.map((r) => r.id), compiled.where));
  if (rows.length === 0) return list;
  const scores = new Map(list.map((r) => [r.id, r.score]));
  const own = new Map(scores);
  for (const r of rows) scores.set(r.id, (scores.get(r.id) ?? 0) + CONTEXT_SHARES[r.place - 1]! * own.get(r.source)!);
  return [...scores]
    .map(([id, score]) => ({ id, score }))
    .sort(byRank)
    .slice(0, n);
}
