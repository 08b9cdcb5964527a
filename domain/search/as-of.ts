import type { EntityManager } from '@mikro-orm/postgresql';
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import type { RawBuilder } from 'kysely';
import { invalid } from '../errors.ts';
import { query, queryOne, sql } from '../sql.ts';
import { analyze, QUESTION_STOP_WORDS } from '../store/analyzer.ts';
import { compileFilters, type CompiledFilters } from '../store/filters.ts';
import { B, idf, K1, queryTermCounts } from './bm25.ts';
import type { FreshVectors } from './fresh.ts';
import { byRank, type Ranked } from './fusion.ts';
import { withThreadContext } from './lexical-context.ts';
import { againIfRenumbered, HYBRID_LEXICAL_TERMS, MAX_QUERY_TERMS, readIndex, sameNumbering, type LexicalList } from './lexical.ts';
import type { IndexRead } from './scoring.ts';
import { answerFromLists, FUSION_DEPTH, semanticList, type SearchAnswer, type SearchRequest } from './search.ts';
import type { QueryVector } from './semantic.ts';

// A search as of a past time: what the scope held then. A memory is in it when it was saved by then (created_at), what
// it tells had happened by then (its event time, occurred_at, else created_at) and it was not superseded by then
// (superseded_at, set by a consolidation merge or an extraction's update or delete). A deleted memory is gone for
// good, from every time; an edit changes a memory in place, so its text as of any time is its text now.
//
// Superseded memories leave the lexical index, so the lexical list is not read from the index's best candidates: it
// reads the memories alive at that time that pass the filters (at most AS_OF_SCAN_MAX), takes the postings of the
// query's terms from the index for those still in it and analyzes the text of the others, and ranks them by BM25 with
// the statistics of those memories (N, average length, df: the scope as it stood). The semantic list is the normal
// one over the same memories (superseded memories keep their vectors). Hybrid fuses them as always, thread context
// coming from the chunks alive at that time. Nothing here runs for a search without as_of.

// The memories an as_of search may read: more is a 400 that asks for narrower filters, so that what one search reads
// (their rows, the postings of its terms, their vectors) stays bounded whatever the size of the org.
export const AS_OF_SCAN_MAX = 10_000;
// The text of memories no longer in the index (superseded since) that one search analyzes, in bytes of UTF-8: more is
// the same 400, answered before any of it is sent.
export const AS_OF_ANALYZE_MAX_BYTES = 1_000_000;
// Analysis gives the event loop back this often (characters), so other requests are not held up.
const ANALYZE_SLICE_CHARS = 100_000;

// A memory `m` alive at `at`: saved and happened by then, and not superseded by then.
function aliveAt(at: number): RawBuilder<unknown> {
  const t = new Date(at).toISOString();
  return sql`m.created_at <= ${t}::timestamptz and coalesce(m.occurred_at, m.created_at) <= ${t}::timestamptz
    and (m.superseded_by is null or m.superseded_at > ${t}::timestamptz)`;
}

export interface AsOfRequest extends SearchRequest {
  asOf: number;
}

const tooBroad = () =>
  invalid(
    'as_of_too_broad',
    [
      `as_of: a search as of a time reads every memory its filters pass at that time, at most ${AS_OF_SCAN_MAX.toLocaleString('en')}`,
      `(holding at most ${AS_OF_ANALYZE_MAX_BYTES.toLocaleString('en')} bytes of text of memories superseded since);`,
      'narrow it with namespace, tags, user_id, agent_id, run_id or occurred_after',
    ].join(' '),
    { max_memories: AS_OF_SCAN_MAX },
  );

// One search as of `request.asOf`, in any mode, answered as searchMemories answers (search.ts).
export async function searchAsOf(
  em: EntityManager,
  orgId: string,
  request: AsOfRequest,
  vector?: Promise<QueryVector>,
  fresh?: FreshVectors,
): Promise<SearchAnswer> {
  vector?.catch(() => undefined);
  const { text, k, mode, asOf } = request;
  const hybrid = mode === 'hybrid';
  const terms = analyze(text, hybrid ? QUESTION_STOP_WORDS : undefined);
  const window = request.window ?? null;
  const filters = await compileFilters(em, orgId, { ...request.filters, includeSuperseded: true });
  if (!filters.satisfiable) return { hits: [], pendingEmbeddings: mode === 'lexical' || !fresh ? null : 0, terms, window };
  const compiled: CompiledFilters = { ...filters, where: sql`${filters.where} and ${aliveAt(asOf)}`, trivial: false, documents: null };
  // A lexical search's read of the memories checks the bound itself; a semantic list needs it checked first.
  if (mode !== 'lexical') {
    const alive = sql`select 1 from memories m where ${compiled.where} limit ${AS_OF_SCAN_MAX + 1}`;
    const counted = await queryOne(em, sql<{ n: number }>`select count(*)::int as n from (${alive}) alive`);
    if ((counted?.n ?? 0) > AS_OF_SCAN_MAX) throw tooBroad();
  }
  const depth = hybrid || window ? Math.max(k, FUSION_DEPTH) : k;
  const semantic = () => semanticList(em, orgId, mode, vector, depth, compiled, fresh);
  const lexical = async () => {
    const list = await againIfRenumbered(() => lexicalAsOf(em, orgId, terms, depth, compiled, hybrid ? HYBRID_LEXICAL_TERMS : undefined));
    if (!hybrid) return { ...list, gains: new Map<string, number>() };
    return { ...list, ...(await withThreadContext(em, orgId, list.ranked, depth, compiled, aliveAt(asOf))) };
  };
  const [words, meaning] = await Promise.all([mode === 'semantic' ? null : lexical(), mode === 'lexical' ? null : semantic()]);
  return answerFromLists(em, orgId, request, { words, meaning, depth, terms, window }, vector);
}

interface Candidate {
  id: string;
  doc_len: number;
  // A live memory is in the index, folded (its document number) or staged; a superseded one is not: its text (null
  // when the superseded ones hold more than AS_OF_ANALYZE_MAX_BYTES, all of them then).
  superseded: boolean;
  docnum: number | null;
  content: string | null;
}

// The best n of the memories `compiled` passes by BM25 over those memories alone. The index is read before the
// memories, so that one folded in between is still found, by its staged row, and one superseded in between is read
// by its text and not by its postings.
async function lexicalAsOf(
  em: EntityManager,
  orgId: string,
  terms: readonly string[],
  n: number,
  compiled: CompiledFilters,
  rarest: number | undefined,
): Promise<LexicalList> {
  const asked = [...queryTermCounts(terms)].slice(0, MAX_QUERY_TERMS);
  if (asked.length === 0 || n <= 0) return { ranked: [], ceiling: 0, weights: new Map() };
  const plain: CompiledFilters = { ...compiled, namespaceId: null, documents: null };
  const names = asked.map(([t]) => t);
  const { index } = await readIndex(em, orgId, names, plain, 'org', 'chosen', n);
  // octet_length reads a stored text's size without reading the text.
  const candidates = await query(
    em,
    sql<Candidate>`with c as materialized (
        select m.id, m.doc_len, m.superseded_by is not null as superseded,
               case when m.superseded_by is not null then octet_length(m.content) else 0 end as bytes
          from memories m where ${compiled.where} limit ${AS_OF_SCAN_MAX + 1})
      select c.id, c.doc_len, c.superseded, d.docnum, t.content
        from c
        left join lateral (select d.docnum from lexical_docs d
                            where d.org_id = ${orgId} and d.memory_id = c.id and ${sameNumbering(orgId, index)} offset 0) d
          on not c.superseded
        left join lateral (select t.content from memories t where t.org_id = ${orgId} and t.id = c.id offset 0) t
          on c.superseded and (select sum(bytes) from c) <= ${AS_OF_ANALYZE_MAX_BYTES}`,
  );
  if (candidates.length > AS_OF_SCAN_MAX || candidates.some((c) => c.superseded && c.content === null)) throw tooBroad();
  const tfs = await termFrequenciesOf(index, candidates, names);
  return rankCandidates(candidates, tfs, asked, n, rarest);
}

// For each query term, the candidates (by position) that hold it, with its frequency in each: from the index's
// postings for those in it, from their text for the others.
async function termFrequenciesOf(index: IndexRead, candidates: Candidate[], terms: string[]): Promise<Map<string, Map<number, number>>> {
  const tfs = new Map(terms.map((t) => [t, new Map<number, number>()]));
  // A candidate's position + 1 by document number (0: none), and by id for the staged postings.
  const byDocnum = new Int32Array(index.base);
  const byId = new Map<string, number>();
  const unindexed: number[] = [];
  candidates.forEach((c, i) => {
    if (c.superseded) {
      unindexed.push(i);
      return;
    }
    if (c.docnum !== null && c.docnum < index.base) byDocnum[c.docnum] = i + 1;
    byId.set(c.id, i);
  });
  for (const [term, held] of tfs) {
    for (const { postings } of index.blocks.get(term) ?? []) {
      const { docnums, tfs: counts } = postings;
      for (let p = 0; p < docnums.length; p++) {
        const at = byDocnum[docnums[p]!]!;
        if (at > 0) held.set(at - 1, counts[p]!);
      }
    }
    for (const posting of index.staged.get(term) ?? []) {
      const at = byId.get(index.stagedIds[posting.key - index.base]!);
      if (at !== undefined) held.set(at, posting.tf);
    }
  }
  let slice = 0;
  for (const i of unindexed) {
    const text = candidates[i]!.content!;
    for (const term of analyze(text)) {
      const held = tfs.get(term);
      if (held) held.set(i, (held.get(i) ?? 0) + 1);
    }
    slice += text.length;
    if (slice >= ANALYZE_SLICE_CHARS) {
      slice = 0;
      await yieldToOthers();
    }
  }
  return tfs;
}

// BM25 (bm25.ts, in scoring.ts's arithmetic and term order) over the candidates, with their own statistics; `rarest`
// keeps that many of the terms held by the fewest candidates (and the terms none holds), as hybrid's list does.
function rankCandidates(
  candidates: Candidate[],
  tfs: Map<string, Map<number, number>>,
  asked: [string, number][],
  n: number,
  rarest: number | undefined,
): LexicalList {
  let counts = asked;
  if (rarest !== undefined && asked.length > rarest) {
    const df = (term: string) => tfs.get(term)!.size;
    const held = asked.filter(([t]) => df(t) > 0).sort(([t1], [t2]) => df(t1) - df(t2) || (t1 < t2 ? -1 : t1 > t2 ? 1 : 0));
    const kept = new Set([...held.slice(0, rarest), ...asked.filter(([t]) => df(t) === 0)].map(([t]) => t));
    counts = asked.filter(([t]) => kept.has(t));
  }
  const docs = candidates.length;
  const total = candidates.reduce((sum, c) => sum + c.doc_len, 0);
  const c0 = K1 * (1 - B);
  const c1 = docs > 0 && total > 0 ? (K1 * B) / (total / docs) : 0;
  const scores = new Float64Array(docs);
  const weights = new Map<string, number>();
  let ceiling = 0;
  for (const [term, qtf] of counts) {
    const held = tfs.get(term)!;
    const weight = qtf * idf(docs, held.size) * (K1 + 1);
    ceiling += weight;
    weights.set(term, weight);
    for (const [at, tf] of held) scores[at] = scores[at]! + (weight * tf) / (tf + c0 + c1 * candidates[at]!.doc_len);
  }
  const ranked: Ranked[] = [];
  for (let at = 0; at < docs; at++) if (scores[at]! > 0) ranked.push({ id: candidates[at]!.id, score: scores[at]! });
  return { ranked: ranked.sort(byRank).slice(0, n), ceiling, weights };
}
