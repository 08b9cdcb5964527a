import type { EntityManager } from '@mikro-orm/postgresql';
import { analyze } from '../store/analyzer.ts';
import { memoriesNamed } from '../store/threads.ts';
import { query, sql } from '../sql.ts';
import { K1 } from './bm25.ts';
import { byRank, type Fused, type Ranked } from './fusion.ts';

// What a question asks of a conversation is often spread over a thread's turns ("what budget did we settle for the
// Lisbon offsite": one turn names Lisbon, a later one the budget), each turn holding only some of its words. So
// hybrid also scores each thread (metadata.parent_ref) as one document: the query's terms its chunks in the lexical
// list hold, each term's frequencies over those chunks summed, saturated as BM25 does (k1, no length norm, since
// only the listed chunks are read) at the term's weight in that list. Every fused hit of a scored thread gains
// THREAD_SHARE times its thread's score over the query's ceiling (the sum of its terms' weights, which no thread
// reaches), so the turns of a thread that holds much of the question rise together, and a thread that holds little
// of it gains little even when no other thread holds more: memories outside threads gain nothing, and must not fall
// behind a thread for a word or two. (Scored as threads of one, the share became a second lexical weight and cost
// CISI and the paraphrase set.)
export const THREAD_SHARE = 0.75;

// A listed chunk's text is read up to this many characters (a conversation's turns are shorter): it bounds the analysis a
// search pays for the long chunks of a document.
export const THREAD_TEXT_MAX = 500;

// The fused list with the threads' gains added, best first (ties by id), what each hit gained (explain), and its
// thread's score (relevance reads it as the hit's words). `words`: the lexical list (its ids, each term's weight, and
// their sum, the ceiling).
export async function withThreadTerms(
  em: EntityManager,
  orgId: string,
  fused: Fused[],
  words: { ranked: Ranked[]; weights: Map<string, number>; ceiling: number },
): Promise<{ ranked: Fused[]; gains: Map<string, number>; threadScores: Map<string, number> }> {
  const gains = new Map<string, number>();
  const ofHits = new Map<string, number>();
  if (fused.length === 0 || words.ranked.length === 0 || words.weights.size === 0) return { ranked: fused, gains, threadScores: ofHits };
  const listed = words.ranked.map((r) => r.id);
  const ids = [...new Set([...listed, ...fused.map((f) => f.id)])];
  const rows = await query(
    em,
    sql<{ id: string; thread: string; text: string | null }>`select x.id, x.metadata->>'parent_ref' as thread,
        case when x.id = any(${listed}::uuid[]) then left(x.content, ${THREAD_TEXT_MAX}) end as text
      from ${memoriesNamed(orgId, ids)} where x.metadata ? 'parent_ref'`,
  );
  const scores = threadScores(rows, words.weights);
  const { ceiling } = words;
  if (scores.size === 0 || ceiling === 0) return { ranked: fused, gains, threadScores: ofHits };
  const threadOf = new Map(rows.map((r) => [r.id, r.thread]));
  const ranked = fused
    .map((f) => {
      const score = scores.get(threadOf.get(f.id) ?? '') ?? 0;
      if (score === 0) return f;
      gains.set(f.id, (THREAD_SHARE * score) / ceiling);
      ofHits.set(f.id, score);
      return { ...f, score: f.score + gains.get(f.id)! };
    })
    .sort(byRank);
  return { ranked, gains, threadScores: ofHits };
}

// Each thread's score over the query's terms in the texts of its listed chunks.
export function threadScores(rows: { thread: string; text: string | null }[], weights: Map<string, number>): Map<string, number> {
  const frequencies = new Map<string, Map<string, number>>();
  for (const { thread, text } of rows) {
    if (text === null) continue;
    const held = frequencies.get(thread) ?? new Map<string, number>();
    for (const term of analyze(text)) if (weights.has(term)) held.set(term, (held.get(term) ?? 0) + 1);
    frequencies.set(thread, held);
  }
  const scores = new Map<string, number>();
  for (const [thread, held] of frequencies) {
    let score = 0;
    for (const [term, tf] of held) score += (weights.get(term)! * tf) / (tf + K1);
    if (score > 0) scores.set(thread, score);
  }
  return scores;
}
