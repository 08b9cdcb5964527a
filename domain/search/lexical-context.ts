import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
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

// The list with the shares added, best first (ties by id), cut to `n`, and what each chunk gained (explain). A chunk
// that gains a share must pass the search's filter, as every hit must. `alive` says which chunks are live (inThread):
// a search as of a past time takes the chunks alive then.
export async function withThreadContext(
  em: EntityManager,
  orgId: string,
  list: Ranked[],
  n: number,
  compiled: CompiledFilters,
  alive?: RawBuilder<unknown>,
): Promise<{ ranked: Ranked[]; gains: Map<string, number> }> {
  const gains = new Map<string, number>();
  if (list.length === 0) return { ranked: list, gains };
  const rows = await query(
    em,
    chunksAfterNamed(
      orgId,
      list.map((r) => r.id),
      compiled.where,
      alive,
    ),
  );
  const own = new Map(list.map((r) => [r.id, r.score]));
  for (const r of rows) gains.set(r.id, (gains.get(r.id) ?? 0) + CONTEXT_SHARES[r.place - 1]! * own.get(r.source)!);
  if (gains.size === 0) return { ranked: list, gains };
  const ids = new Set([...own.keys(), ...gains.keys()]);
  const ranked = [...ids]
    .map((id) => ({ id, score: (own.get(id) ?? 0) + (gains.get(id) ?? 0) }))
    .sort(byRank)
    .slice(0, n);
  return { ranked, gains };
}
