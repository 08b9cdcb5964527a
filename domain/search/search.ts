import type { EntityManager } from '@mikro-orm/postgresql';
import { isLong, type Passage } from '../store/passages.ts';
import { compileFilters, type CompiledFilters, type MemoryFilters } from '../store/filters.ts';
import { MEMORIES_IN_NAMESPACES, MEMORY_COLUMNS, memoryView, type MemoryRow, type MemoryView } from '../store/model.ts';
import { query, sql } from '../sql.ts';
import { analyze, QUESTION_STOP_WORDS } from '../store/analyzer.ts';
import { freshRanking, type FreshVectors } from './fresh.ts';
import { byRank, fuse, type Ranked, type Retriever } from './fusion.ts';
import { HYBRID_LEXICAL_TERMS, lexicalRanking, type LexicalList } from './lexical.ts';
import { withThreadContext } from './lexical-context.ts';
import type { SearchMode } from './modes.ts';
import type { ModelRelevance } from '../store/embedder.ts';
import { nonIncreasing, relevanceOf, type RelevanceInputs } from './relevance.ts';
import type { TimeWindow } from './time-words.ts';
import { matchedPassages, semanticRanking, type QueryVector } from './semantic.ts';
import { withThreadTerms } from './thread-terms.ts';
import { raiseByCues, readAnswerCues, TIME_ANSWER_GAIN, type AnswerCues } from './answer-cues.ts';

// lexical: BM25 over the postings (the default); semantic: cosine similarity of embeddings; hybrid: both
// lists fused by relative score (fusion.ts), the lexical one without question words, from a long question's rarest
// terms, with a namespace's own statistics (lexical.ts) and with thread context (lexical-context.ts), then the hits of
// the threads that hold most of the query's words raised (thread-terms.ts), and those whose speaker the question names
// or that state a time when it asks for one, short messages lowered (answer-cues.ts). Every hit
// carries its relevance (relevance.ts), and memories not embedded yet are scored by meaning on the spot (fresh.ts).

// Hybrid fuses this many of each list (or k, if larger): deep enough that a memory ranked moderately by
// both retrievers can overtake one ranked first by only one of them.
export const FUSION_DEPTH = 100;

// Where a hit stood in one list: its 1-based rank and its score there.
export interface ListPlace {
  rank: number;
  score: number;
}

// Why a hit ranked where it did (explain): its place in each list that found it, what thread context added to its
// words' score (hybrid), the passage it was found by, the fused score (hybrid), and the inputs of its relevance.
export interface HitExplain {
  lexical?: ListPlace;
  threadContext?: number;
  semantic?: ListPlace;
  // Hybrid: what its thread's share of the query's words added to its fused score (thread-terms.ts).
  threadTerms?: number;
  // Hybrid: what it gained because the question names its speaker (metadata.name), and for stating a time when the
  // question asks for one (answer-cues.ts).
  speakerNamed?: number;
  timeAnswer?: number;
  // Hybrid: what a short message lost (negative; answer-cues.ts).
  shortMessage?: number;
  passage?: number;
  fused?: number;
  // Its event time lies in the window the question named, which ranked it ahead of the memories outside.
  timeWindow?: true;
  relevanceInputs: RelevanceInputs;
}

export interface SearchHit extends MemoryView {
  score: number;
  relevance: number;
  foundBy: Retriever[];
  // A long memory found by meaning through one of its passages: that passage (domain/store/passages.ts).
  matchedPassage?: Passage;
  explain: HitExplain;
}

export interface SearchAnswer {
  hits: SearchHit[];
  // Memories the search's filters pass that it could not score by meaning (no vector yet, and past what a search
  // embeds itself: fresh.ts); null for a lexical search, or one made without `fresh`.
  pendingEmbeddings: number | null;
  // The lexical list's terms, as analyzed (explain).
  terms: string[];
  // The window of event time the question named, if it was read for one (time-words.ts).
  window: TimeWindow | null;
}

export interface SearchRequest {
  text: string;
  k: number;
  mode: SearchMode;
  filters?: MemoryFilters | undefined;
  // Hits below this relevance are left out.
  minRelevance?: number | undefined;
  // A window of event time the question named: the memories in it rank first (time-words.ts).
  window?: TimeWindow | null | undefined;
}

export const needsVector = (mode: SearchMode): boolean => mode !== 'lexical';

// The semantic list of a search: the index's nearest memories, and the newest ones still waiting for their vector
// (fresh.ts) merged in, with how many of those could not be embedded in time.
export async function semanticList(
  em: EntityManager,
  orgId: string,
  mode: SearchMode,
  vector: Promise<QueryVector> | undefined,
  depth: number,
  compiled: CompiledFilters,
  fresh: FreshVectors | undefined,
): Promise<{ ranked: Ranked[]; pending: number | null }> {
  if (!vector) throw new Error(`a ${mode} search needs the query vector`);
  const [indexed, recent] = await Promise.all([
    semanticRanking(em.fork(), orgId, vector, depth, compiled),
    fresh ? freshRanking(em.fork(), orgId, vector, compiled, fresh) : null,
  ]);
  return recent ? { ranked: mergeRanked(indexed, recent.ranked, depth), pending: recent.pending } : { ranked: indexed, pending: null };
}

// One search in any mode. `vector` is the query's embedding, still being computed for semantic and hybrid
// (so the lexical list is fetched meanwhile), and undefined for lexical. `fresh` embeds memories not yet embedded,
// so that a search right after a save finds it by meaning, and counts those it could not; the service's own searches
// (chat, extraction, similar) go without it.
export async function searchMemories(
  em: EntityManager,
  orgId: string,
  request: SearchRequest,
  vector?: Promise<QueryVector>,
  fresh?: FreshVectors,
): Promise<SearchAnswer> {
  // Its failure is handled where it is awaited; until then, it must not count as an unhandled rejection.
  vector?.catch(() => undefined);
  const { text, k, mode } = request;
  const hybrid = mode === 'hybrid';
  const terms = analyze(text, hybrid ? QUESTION_STOP_WORDS : undefined);
  const compiled = await compileFilters(em, orgId, request.filters ?? {});
  const window = request.window ?? null;
  if (!compiled.satisfiable) return { hits: [], pendingEmbeddings: mode === 'lexical' || !fresh ? null : 0, terms, window };
  // A window reads every list as deep as hybrid does, so that the memories in it can rise from below the first k.
  const depth = hybrid || window ? Math.max(k, FUSION_DEPTH) : k;
  const semantic = () => semanticList(em, orgId, mode, vector, depth, compiled, fresh);
  const lexical = async (): Promise<LexicalList & { gains: Map<string, number> }> => {
    if (!hybrid) return { ...(await lexicalRanking(em, orgId, terms, depth, compiled)), gains: new Map<string, number>() };
    const list = await lexicalRanking(em, orgId, terms, depth, compiled, { statistics: 'namespace', rarest: HYBRID_LEXICAL_TERMS });
    const context = await withThreadContext(em, orgId, list.ranked, depth, compiled);
    return { ...list, ranked: context.ranked, gains: context.gains };
  };
  const [words, meaning] = await Promise.all([mode === 'semantic' ? null : lexical(), mode === 'lexical' ? null : semantic()]);
  return answerFromLists(em, orgId, request, { words, meaning, depth, terms, window }, vector);
}

// What a search read: its lists (null for a mode that reads none), how deep, the lexical list's terms, the window.
export interface ReadLists {
  words: (LexicalList & { gains: Map<string, number> }) | null;
  meaning: { ranked: Ranked[]; pending: number | null } | null;
  depth: number;
  terms: string[];
  window: TimeWindow | null;
}

// The answer from the lists a search read (searchMemories, and as of a time: as-of.ts): one list with its own scores
// or both fused, the memories in the window first, cut to k, each hit with its relevance and its row, a long memory
// found by meaning with the passage it was found by.
export async function answerFromLists(
  em: EntityManager,
  orgId: string,
  request: SearchRequest,
  { words, meaning, depth, terms, window }: ReadLists,
  vector?: Promise<QueryVector>,
): Promise<SearchAnswer> {
  const { k, mode } = request;
  const lists = { lexical: words?.ranked ?? [], semantic: meaning?.ranked ?? [] };
  const only = (retriever: Retriever, list: Ranked[]) => list.map((r) => ({ ...r, foundBy: [retriever] }));
  // One list keeps its own scores; hybrid's are fused, then raised by their threads' words and their answer cues.
  const fused = mode === 'hybrid' ? fuse(lists, depth) : null;
  const none = { gains: new Map<string, number>(), threadScores: new Map<string, number>() };
  const fusedIds = fused?.map((f) => f.id);
  const [threads, cueRows] = await Promise.all([
    fused && words ? withThreadTerms(em, orgId, fused, words) : { ranked: fused, ...none },
    fusedIds ? readAnswerCues(em.fork(), orgId, request.text, fusedIds) : null,
  ]);
  const cues = threads.ranked && cueRows ? raiseByCues(request.text, threads.ranked, cueRows) : null;
  const listed = cues?.ranked ?? (words ? only('lexical', words.ranked) : only('semantic', meaning!.ranked));
  const { ranked, inWindow } = window
    ? await windowFirst(em, orgId, listed, window, k)
    : { ranked: listed.slice(0, k), inWindow: new Set<string>() };
  const model = meaning && vector ? (await vector).relevance : undefined;
  const raised = {
    ...threads,
    speakers: cues?.speakers ?? new Map<string, number>(),
    times: cues?.times ?? new Set<string>(),
    shortMessages: cues?.shortMessages ?? new Map<string, number>(),
  };
  const explained = explainRanking(mode, ranked, words, meaning?.ranked ?? null, model, inWindow, raised);
  const hits = (await withRows(em, orgId, explained)).filter((h) => h.relevance >= (request.minRelevance ?? 0));
  const answer = { hits, pendingEmbeddings: meaning ? meaning.pending : null, terms, window };
  const long = hits.filter((h) => h.foundBy.includes('semantic') && isLong(h.content));
  if (long.length === 0 || !vector) return answer;
  const matched = await matchedPassages(em, orgId, await vector, long);
  for (const h of hits) {
    const passage = matched.get(h.id);
    if (passage) Object.assign(h, { matchedPassage: passage.passage, explain: { ...h.explain, passage: passage.number } });
  }
  return answer;
}

// The ranking with the memories whose event time lies in the window first, each part in its own order, cut to k.
async function windowFirst<T extends { id: string }>(em: EntityManager, orgId: string, ranked: T[], window: TimeWindow, k: number) {
  const rows = await query(
    em,
    sql<{ id: string }>`select m.id from memories m where m.org_id = ${orgId} and m.id = any(${ranked.map((r) => r.id)}::uuid[])
      and coalesce(m.occurred_at, m.created_at) between ${new Date(window.after)}::timestamptz and ${new Date(window.before)}::timestamptz`,
  );
  const inWindow = new Set(rows.map((r) => r.id));
  const first = ranked.filter((r) => inWindow.has(r.id));
  return { ranked: [...first, ...ranked.filter((r) => !inWindow.has(r.id))].slice(0, k), inWindow };
}

// The indexed list with memories scored on the spot merged in, best first, cut to n.
function mergeRanked(indexed: Ranked[], recent: Ranked[], n: number): Ranked[] {
  if (recent.length === 0) return indexed;
  const known = new Set(indexed.map((r) => r.id));
  return [...indexed, ...recent.filter((r) => !known.has(r.id))].sort(byRank).slice(0, n);
}

interface Explained {
  id: string;
  score: number;
  relevance: number;
  foundBy: Retriever[];
  explain: HitExplain;
}

// Each ranked hit with its place in each list and its relevance, made non-increasing down the ranking.
function explainRanking(
  mode: SearchMode,
  ranked: { id: string; score: number; foundBy: Retriever[] }[],
  words: (LexicalList & { gains: Map<string, number> }) | null,
  meaning: Ranked[] | null,
  model: ModelRelevance | undefined,
  inWindow: Set<string>,
  raised: Pick<AnswerCues, 'speakers' | 'times' | 'shortMessages'> & { gains: Map<string, number>; threadScores: Map<string, number> },
): Explained[] {
  const placesOf = (list: Ranked[]) => new Map(list.map((r, i) => [r.id, { rank: i + 1, score: r.score }]));
  const lexicalPlaces = words ? placesOf(words.ranked) : new Map<string, ListPlace>();
  const semanticPlaces = meaning ? placesOf(meaning) : new Map<string, ListPlace>();
  // A memory the semantic list missed scored no better than its last.
  const semanticFloor = meaning && meaning.length > 0 ? meaning.at(-1)!.score : 0;
  const explained = ranked.map((r) => {
    const lexical = lexicalPlaces.get(r.id);
    const semantic = semanticPlaces.get(r.id);
    // A chunk of a thread that holds the query's words counts its thread's words when they score higher.
    const byWords = Math.max(lexical?.score ?? 0, raised.threadScores.get(r.id) ?? 0);
    const inputs: RelevanceInputs = {
      lexical: words && words.ceiling > 0 ? Math.min(1, byWords / words.ceiling) : 0,
      semantic: meaning ? (semantic?.score ?? semanticFloor) : null,
    };
    const gain = words?.gains.get(r.id);
    const explain: HitExplain = {
      ...(lexical ? { lexical: { rank: lexical.rank, score: lexical.score - (gain ?? 0) } } : {}),
      ...(gain ? { threadContext: gain } : {}),
      ...(semantic ? { semantic } : {}),
      ...(raised.gains.has(r.id) ? { threadTerms: raised.gains.get(r.id)! } : {}),
      ...(raised.speakers.has(r.id) ? { speakerNamed: raised.speakers.get(r.id)! } : {}),
      ...(raised.times.has(r.id) ? { timeAnswer: TIME_ANSWER_GAIN } : {}),
      ...(raised.shortMessages.has(r.id) ? { shortMessage: raised.shortMessages.get(r.id)! } : {}),
      ...(mode === 'hybrid' ? { fused: r.score } : {}),
      ...(inWindow.has(r.id) ? { timeWindow: true } : {}),
      relevanceInputs: inputs,
    };
    return { ...r, relevance: relevanceOf(mode, inputs, model), explain };
  });
  const relevance = nonIncreasing(explained.map((e) => e.relevance));
  return explained.map((e, i) => ({ ...e, relevance: relevance[i]! }));
}

// The memory rows of ranked ids, in rank order, each with what the ranking said of it.
async function withRows(em: EntityManager, orgId: string, ranked: Explained[]): Promise<SearchHit[]> {
  if (ranked.length === 0) return [];
  const rows = await query(
    em,
    sql<MemoryRow>`select ${MEMORY_COLUMNS} from ${MEMORIES_IN_NAMESPACES}
      where m.org_id = ${orgId} and m.id = any(${ranked.map((r) => r.id)}::uuid[])`,
  );
  const byId = new Map(rows.map((r) => [r.id, memoryView(r)]));
  return ranked.flatMap((r) => {
    const memory = byId.get(r.id);
    return memory ? [{ ...memory, ...r }] : [];
  });
}
