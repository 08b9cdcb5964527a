import type { EntityManager } from '@mikro-orm/postgresql';
import type { RawBuilder } from 'kysely';
import { counterValue } from '../counters.ts';
import { NAMESPACE_COUNTERS, ORG_COUNTERS } from '../store/counters.ts';
import { memoryPasses, type CompiledFilters } from '../store/filters.ts';
import { query, sql } from '../sql.ts';
import { queryTermCounts } from './bm25.ts';
import { BestFirst } from './best-first.ts';
import { BlockCache, DEFAULT_BLOCK_CACHE_MB, type CachedBlock } from './block-cache.ts';
import { decodeBlock, peaksOf } from './blocks.ts';
import { byRank, type Ranked } from './fusion.ts';
import { scoreAll, type IndexRead, type Scored } from './scoring.ts';
import { scoreTop } from './top-scores.ts';

// Distinct query terms beyond this are ignored.
export const MAX_QUERY_TERMS = 128;
// Hybrid's lexical list reads a long question by this many of its rarest terms (lexicalRanking's `rarest`). The
// common words it leaves out hold most of the postings and add little to BM25, so the ranking stays about as good
// for far less reading.
export const HYBRID_LEXICAL_TERMS = 32;
// A filtered search checks its best candidates against the filter in rounds: this many first (or 8k), then as many as
// the share that passed says are needed (at most eight times more), until k pass or every candidate has been checked.
const FIRST_CHECK = 256;
const CHECK_GROWTH = 8;

// This process's copies of the blocks searches read (block-cache.ts); its size is LEXICAL_CACHE_MB, set at start.
export const blockCache = new BlockCache(DEFAULT_BLOCK_CACHE_MB * 2 ** 20);

// Exact BM25 (Lucene's idf, k1 1.2, b 0.75, see bm25.ts) with statistics per org, scored in this process (scoring.ts): one statement reads
// the terms' blocks (fold.ts), their rows not folded yet, the org's tombstones and its counters, all in one snapshot; df counts the live
// postings, N and the average length come from the counters. Scoring a posting here is far cheaper than reading it as a PostgreSQL row. An
// unfiltered search scores only what it takes to know its best n (MaxScore); a filtered one checks the best candidates against the filter,
// in score order, so the result is the same as filtering first. A filter's namespace is read whole from the index (its document numbers)
// when that is the cheaper way (wholeNamespace), and then only its documents are scored; otherwise, for a namespace alone, MaxScore keeps
// enough of the best that about 2n + 8 should be in it. Other filters (or candidates that fall short) score every posting. `statistics`:
// 'namespace' takes N, the average length and df from the filter's namespace (when it was read whole) instead of the org: hybrid's lexical
// list (search.ts, docs/api-decisions.md). `rarest` keeps only that many of the query's terms, those with the fewest postings in the org
// (HYBRID_LEXICAL_TERMS). `namespaceRead` overrides the choice (tests and bench/namespaces-at-scale.ts compare the two ways). Returns the
// best `n` memory ids with their BM25 scores, best first (ties by id), and the query's ceiling (scoring.ts), what a hit's relevance
// measures its score against.
export interface LexicalList {
  ranked: Ranked[];
  ceiling: number;
  // Each searched term's weight (scoring.ts, Scored).
  weights: Map<string, number>;
}
export async function lexicalRanking(
  em: EntityManager,
  orgId: string,
  terms: readonly string[],
  n: number,
  compiled: CompiledFilters,
  options: { statistics?: 'org' | 'namespace'; namespaceRead?: NamespaceRead; rarest?: number } = {},
): Promise<LexicalList> {
  return againIfRenumbered(() => rankLexically(em, orgId, terms, n, compiled, options));
}

async function rankLexically(
  em: EntityManager,
  orgId: string,
  terms: readonly string[],
  n: number,
  compiled: CompiledFilters,
  {
    statistics = 'org',
    namespaceRead = 'chosen',
    rarest,
  }: { statistics?: 'org' | 'namespace'; namespaceRead?: NamespaceRead; rarest?: number },
): Promise<LexicalList> {
  const asked = [...queryTermCounts(terms)].slice(0, MAX_QUERY_TERMS);
  if (asked.length === 0 || n <= 0) return { ranked: [], ceiling: 0, weights: new Map() };
  const { index, inNamespace, exact } = await readIndex(
    em,
    orgId,
    asked.map(([t]) => t),
    compiled,
    statistics,
    namespaceRead,
    n,
  );
  const counts = rarest !== undefined && asked.length > rarest ? rarestOf(index, asked, rarest) : asked;
  const filter = compiled.trivial && compiled.namespaceId === null ? null : compiled;
  // How many of the best candidates MaxScore keeps, checked before anything else: n without a filter, for a
  // namespace read whole (all its candidates pass but superseded memories) or for the memories of a filter read
  // whole (all pass); for a larger namespace alone, enough that about 2n + 8 should be in it, its share of the org
  // coming from the counters; none for other filters. When they fall short (a filter, or memories deleted after the
  // index was read), what they left out was never scored, so every posting is scored.
  const first =
    !filter || (index.scope && (compiled.trivial || exact))
      ? n
      : compiled.trivial && inNamespace > 0
        ? Math.ceil(((2 * n + 8) * index.n) / inNamespace)
        : Infinity;
  if (!filter || first < index.n / 2) {
    const top = scoreTop(index, counts, first);
    const found = await pick(em, orgId, index, top, n, filter, first);
    if (found.length >= n || !top.pruned) return { ranked: found, ceiling: top.ceiling, weights: top.weights };
  }
  const all = scoreAll(index, counts);
  return { ranked: await pick(em, orgId, index, all, n, filter), ceiling: all.ceiling, weights: all.weights };
}

// A search reads the index in one statement and looks its document numbers up in later ones; between them, the curator
// may renumber the org's documents (fold.ts), after which a number names another memory. So each later statement
// checks that the numbering is still the one read (sameNumbering, failing with MS001 otherwise), and the search
// starts over when it is not.
export interface NumberedIndex extends IndexRead {
  numbering: number;
}

export const sameNumbering = (orgId: string, index: NumberedIndex): RawBuilder<unknown> =>
  sql`(select lexical_numbering_is(${orgId}, ${index.numbering}))`;

export async function againIfRenumbered<T>(search: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await search();
    } catch (err) {
      if ((err as { code?: unknown }).code !== RENUMBERED) throw err;
    }
  }
}

const RENUMBERED = 'MS001';

// The `keep` terms of the query with the fewest postings read (folded, tombstoned ones included, and staged; ties by
// term), in the query's order, and the terms the org does not hold: they score nothing but count in the ceiling.
function rarestOf(index: IndexRead, counts: [string, number][], keep: number): [string, number][] {
  const postings = new Map(
    counts.map(([term]) => [
      term,
      (index.blocks.get(term) ?? []).reduce((sum, b) => sum + b.postings.docnums.length, 0) + (index.staged.get(term)?.length ?? 0),
    ]),
  );
  const absent = [...postings].filter(([, count]) => count === 0).map(([term]) => term);
  const kept = new Set(
    [...postings]
      .filter(([, count]) => count > 0)
      .sort(([t1, c1], [t2, c2]) => c1 - c2 || (t1 < t2 ? -1 : t1 > t2 ? 1 : 0))
      .slice(0, keep)
      .map(([term]) => term)
      .concat(absent),
  );
  return counts.filter(([term]) => kept.has(term));
}

// The best n candidates that resolve to memories (and match the filter, if any), best first, ties by id.
// `first`: how many the first round checks. Candidates pruned to the best few are checked as they are: what they
// leave out was never scored, so the caller scores every posting when they come up short.
async function pick(
  em: EntityManager,
  orgId: string,
  index: NumberedIndex,
  candidates: Scored,
  n: number,
  compiled: CompiledFilters | null,
  first = compiled ? Math.max(FIRST_CHECK, 8 * n) : n,
): Promise<Ranked[]> {
  if (candidates.keys.length === 0) return [];
  const found: Ranked[] = [];
  // Candidates are taken best first, all ties of the last score included, so every candidate left unchecked
  // scores below every one checked: once n pass, they are the best n that pass.
  const order = new BestFirst(candidates.scores);
  let want = first;
  let checked = 0;
  const collect = (positions: Int32Array, ids: Map<number, string>) => {
    for (let at = 0; at < positions.length; at++) {
      const i = positions[at]!;
      const id = ids.get(candidates.keys[i]!);
      if (id !== undefined) found.push({ id, score: candidates.scores[i]! });
    }
  };
  while (found.length < n && !order.done) {
    // A selective filter: if the candidates checked so far say that the memories matching it are fewer
    // than the candidates the next round would check, reading those memories is the cheaper way to finish.
    if (
      compiled &&
      !candidates.pruned &&
      checked > 0 &&
      ((found.length + 1) / (checked + 1)) * (index.scope?.docnums.length ?? index.n) < want
    ) {
      const rest = order.rest();
      collect(rest, await matchingRest(em, orgId, compiled, index, keysAt(candidates.keys, rest)));
      break;
    }
    const batch = order.take(want);
    checked += batch.length;
    collect(batch, await resolve(em, orgId, index, keysAt(candidates.keys, batch), compiled));
    // The next round: twice the candidates that the share passing so far says the missing hits need, at most
    // CHECK_GROWTH times this round's.
    want = Math.min(want * CHECK_GROWTH, Math.ceil((2 * (n - found.length) * (checked + 1)) / (found.length + 1)));
  }
  found.sort(byRank);
  return found.slice(0, n);
}

interface IndexRow {
  kind: number;
  term: string | null;
  docs: number | null;
  wide: boolean | null;
  // Null for a block whose version the cache holds.
  data: Buffer | null;
  first_docnum: number | null;
  version: string | null;
  memory_id: string | null;
  tf: number | null;
  doc_len: number | null;
  n: number | null;
  total: number | null;
  in_namespace: number | null;
}

// Also the live memories of the filter's namespace, when it names one (0 otherwise), and, for a search of the
// best `n`, the documents of a scope read whole (index.scope; `exact` when they are exactly the filter's): the
// documents of the user, agent or run the filter names (compiled.documents) when they are few enough
// (scopeDocuments), else the namespace's when reading them is the cheaper way (wholeNamespace), with its
// statistics when asked. Hybrid's namespace statistics need the namespace's documents, so they keep that read.
export async function readIndex(
  em: EntityManager,
  orgId: string,
  terms: string[],
  compiled: CompiledFilters,
  statistics: 'org' | 'namespace',
  namespaceRead: NamespaceRead,
  n: number,
): Promise<{ index: NumberedIndex; inNamespace: number; exact: boolean }> {
  const { namespaceId } = compiled;
  const scoped =
    compiled.documents && namespaceRead === 'chosen' && !(statistics === 'namespace' && namespaceId !== null) ? compiled.documents : null;
  // Decided once, from the counters the statement reads first, and read where the statement needs it.
  const decide = scoped ? null : namespaceId ? wholeNamespace(namespaceRead, n, !compiled.trivial) : null;
  const readWhole = scoped || decide ? sql`(select whole from read_whole)` : null;
  // Whether a staged memory is in the scope read whole.
  const inScope = scoped ? compiled.where : sql`m.namespace_id = ${namespaceId}`;
  // The cached blocks of the query's terms, taken now: the rows the statement sends without bytes are these.
  const blockKey = (term: string, first: number, version: string) => `${first}\u0000${version}\u0000${term}`;
  const cached = new Map<string, CachedBlock>();
  const have: { term: string; block: CachedBlock }[] = [];
  for (const term of terms) {
    for (const block of blockCache.get(orgId, term)) {
      cached.set(blockKey(term, block.first, block.version), block);
      have.push({ term, block });
    }
  }
  const rows = await query(
    em,
    sql<IndexRow>`
      with totals as materialized (
        select ${counterValue(orgId, orgId, ORG_COUNTERS.live)}::float8 as n,
          ${counterValue(orgId, orgId, ORG_COUNTERS.docLen)}::float8 as total,
               ${counterValue(orgId, namespaceId, NAMESPACE_COUNTERS.live)}::float8 as in_namespace)
      ${scoped ? scopeDocuments(scoped.where, n) : decide ? sql`, read_whole as materialized (select ${decide} as whole from totals)` : sql``}
      select 0 as kind, b.term, b.docs, b.wide, case when c.f is null then b.data end as data, b.first_docnum, b.xmin::text as version,
             null::uuid as memory_id, null::int as tf, null::int as doc_len, null::float8 as n, null::float8 as total,
               null::float8 as in_namespace
        from lexical_blocks b
        left join unnest(${have.map((h) => h.term)}::text[], ${have.map((h) => h.block.first)}::int[],
          ${have.map((h) => h.block.version)}::text[]) as c(t, f, v)
          on c.t = b.term and c.f = b.first_docnum and c.v = b.xmin::text
       where b.org_id = ${orgId} and b.term = any(${terms}::text[])
      union all
      -- A staged memory's row says in its wide column whether the memory is in a namespace read whole.
      select 1, q.t, null, ${readWhole ? sql`${readWhole} and exists (select 1 from memories m where m.org_id = s.org_id and m.id = s.memory_id and ${inScope} offset 0)` : sql`null`},
             null, null, null, s.memory_id, (s.tfs ->> q.t)::int, s.doc_len, null, null, null
        from lexical_staged s cross join unnest(${terms}::text[]) as q(t)
       where s.org_id = ${orgId} and s.tfs ?| ${terms}::text[] and s.tfs ? q.t
      union all
      select 2, null, (select next_docnum from lexical_state where org_id = ${orgId}), null,
             (select string_agg(int4send(docnum), ''::bytea) from lexical_tombstones where org_id = ${orgId}),
             (select numbering from lexical_state where org_id = ${orgId}), null, null, null, null,
             t.n, t.total, t.in_namespace
        from totals t
      ${scoped ? SCOPE_DOCUMENTS : readWhole ? namespaceDocuments(orgId, namespaceId!, readWhole) : sql``}`,
  );
  // The meta row: the next document number (docs), the tombstones (data) and the numbering (first_docnum).
  const meta = rows.find((r) => r.kind === 2)!;
  const base = meta.docs ?? 0;
  const index: NumberedIndex = {
    numbering: meta.first_docnum ?? 0,
    blocks: new Map(),
    staged: new Map(),
    base,
    stagedIds: [],
    tombstones: new Int32Array(0),
    n: meta.n ?? 0,
    total: meta.total ?? 0,
  };
  if (meta.data) index.tombstones = int4s(meta.data);
  const stagedKey = new Map<string, number>();
  const read = new Map<string, CachedBlock[]>();
  for (const r of rows) {
    if (r.kind === 0) {
      let block: CachedBlock;
      if (r.data) {
        const postings = decodeBlock({ docs: r.docs!, wide: r.wide!, data: owned(r.data) });
        block = { first: r.first_docnum!, version: r.version!, postings, peaks: peaksOf(postings) };
        blockCache.misses += 1;
      } else {
        block = cached.get(blockKey(r.term!, r.first_docnum!, r.version!))!;
        blockCache.hits += 1;
      }
      let list = read.get(r.term!);
      if (!list) read.set(r.term!, (list = []));
      list.push(block);
    } else if (r.kind === 1) {
      let key = stagedKey.get(r.memory_id!);
      if (key === undefined) {
        key = base + index.stagedIds.length;
        stagedKey.set(r.memory_id!, key);
        index.stagedIds.push(r.memory_id!);
      }
      let list = index.staged.get(r.term!);
      if (!list) index.staged.set(r.term!, (list = []));
      list.push({ key, tf: r.tf!, len: r.doc_len! });
    }
  }
  const inNamespace = meta.in_namespace ?? 0;
  const namespace = rows.find((r) => r.kind === 3);
  if (namespace) {
    index.scope = {
      docnums: namespace.data ? int4s(namespace.data) : new Int32Array(0),
      stagedKeys: new Set(rows.flatMap((r) => (r.kind === 1 && r.wide ? [stagedKey.get(r.memory_id!)!] : []))),
      statistics: statistics === 'namespace' && !scoped ? { n: inNamespace, total: namespace.total ?? 0 } : null,
    };
  }
  for (const term of terms) {
    // In document order, as scoring walks them.
    const blocks = (read.get(term) ?? []).sort((a, b) => a.first - b.first);
    blockCache.set(orgId, term, blocks);
    if (blocks.length > 0) index.blocks.set(term, blocks);
  }
  return { index, inNamespace, exact: namespace !== undefined && scoped?.exact === true };
}

export type NamespaceRead = 'chosen' | 'whole' | 'candidates';

// Reading one of a namespace's document numbers costs about 1 / WHOLE_COST_RATIO of checking one of MaxScore's
// candidates against its row. MaxScore checks about (2n + 8) N / m candidates for a namespace of m memories
// among the org's N, so the namespace is read whole when m <= WHOLE_COST_RATIO (2n + 8) N / m: the bound grows with
// the org and with the depth of the list, about 13,400 of 100,000 and 42,000 of 1,000,000 for k 10, 36,000 and
// 115,000 for hybrid's list of 100. The ratio fits where the two ways cost the same in bench/namespaces-at-scale.ts.
const WHOLE_COST_RATIO = 64;

// A filter beyond the namespace (tags, times, metadata) passes a share of the namespace's memories, so the org's
// candidates that must be checked one by one grow by its inverse. Taken as 1 / FILTERED_SHARE, the bound on a
// namespace read whole grows by sqrt(FILTERED_SHARE), near where the two ways crossed with a selective tag filter.
const FILTERED_SHARE = 8;

// True when the namespace is read whole for a search of the best `n`, as a condition on the statement's totals;
// null when it never is. `filtered`: the filter holds more than the namespace.
function wholeNamespace(namespaceRead: NamespaceRead, n: number, filtered: boolean): RawBuilder<unknown> | null {
  if (namespaceRead !== 'chosen') return namespaceRead === 'whole' ? sql`true` : null;
  return sql`in_namespace ^ 2 <= ${WHOLE_COST_RATIO * (2 * n + 8) * (filtered ? FILTERED_SHARE : 1)} * n`;
}

// A scope's documents are read from its partial index (lexical_docs_user_id_idx and its siblings) as a namespace's
// are, but without a counter to say beforehand how many there are: they are read until there are more than
// sqrt(SCOPE_COST_RATIO (2n + 8) N) of the org's N, the bound wholeNamespace puts on a namespace, and the scope is
// read whole when they are not. A larger scope costs that many index entries read for nothing.
const SCOPE_COST_RATIO = WHOLE_COST_RATIO;

const scopeDocuments = (where: RawBuilder<unknown>, n: number) => sql`,
      bound as materialized (select floor(sqrt(${SCOPE_COST_RATIO * (2 * n + 8)} * n))::int as most from totals),
      scope_docs as materialized (select d.docnum from lexical_docs d where ${where} limit (select most + 1 from bound)),
      read_whole as materialized (select (select count(*) from scope_docs) <= (select most from bound) as whole)`;

// The row of kind 3 for a scope read whole: its documents.
const SCOPE_DOCUMENTS = sql`
      union all
      select 3, null, null, null, (select string_agg(int4send(docnum), ''::bytea)
      from scope_docs), null, null, null, null, null, null, null, null
       where (select whole from read_whole)`;

// The row of kind 3, when `readWhole` holds: the namespace's folded documents (from lexical_docs' namespace index
// alone) and their total length; its memory count is the meta row's.
const namespaceDocuments = (orgId: string, namespaceId: string, readWhole: RawBuilder<unknown>) => sql`
      union all
      select 3, null, null, null, (select string_agg(int4send(docnum), ''::bytea) from lexical_docs
      where namespace_id = ${namespaceId}), null, null, null, null, null, null,
             ${counterValue(orgId, namespaceId, NAMESPACE_COUNTERS.docLen)}::float8, null
       where ${readWhole}`;

// int4send's big-endian integers, concatenated. (A loop: Int32Array.from with a mapping function took 25 times as
// long, 4 ms for a namespace of 115,000 documents.)
function int4s(data: Buffer): Int32Array {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const values = new Int32Array(data.byteLength / 4);
  for (let i = 0; i < values.length; i++) values[i] = view.getInt32(4 * i);
  return values;
}

// A buffer the cache may keep: the driver's buffer can be a slice of a larger one (a small one is cut from Node's
// shared pool), which a view would keep alive, so such a slice is copied.
function owned(data: Buffer): Buffer {
  if (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength) return data;
  const copy = new Uint8Array(data.byteLength);
  copy.set(data);
  return Buffer.from(copy.buffer);
}

function keysAt(keys: Int32Array, positions: Int32Array): number[] {
  const at = new Array<number>(positions.length);
  for (let i = 0; i < positions.length; i++) at[i] = keys[positions[i]!]!;
  return at;
}

// The memory ids of the candidate `keys` that match the filter, found from the filter's side: every folded
// memory matching it (one statement, as long as the filter is selective), and the staged candidates by id.
async function matchingRest(
  em: EntityManager,
  orgId: string,
  compiled: CompiledFilters,
  index: NumberedIndex,
  keys: number[],
): Promise<Map<number, string>> {
  const rows = await query(
    em,
    // Each memory's document by its key (OFFSET 0 keeps the join from following statistics: memoryPasses).
    sql<{ docnum: number; memory_id: string }>`select d.docnum, m.id as memory_id from memories m cross join lateral (
        select d.docnum from lexical_docs d where d.org_id = m.org_id and d.memory_id = m.id offset 0) d
      where ${compiled.where} and ${sameNumbering(orgId, index)}`,
  );
  const ids = await resolve(
    em,
    orgId,
    index,
    keys.filter((key) => key >= index.base),
    compiled,
  );
  for (const r of rows) ids.set(r.docnum, r.memory_id);
  return ids;
}

// The memory ids of candidate keys: a document number through lexical_docs (gone if the memory was deleted or
// edited since), a staged memory as it is; with a filter, only those whose rows match it.
async function resolve(
  em: EntityManager,
  orgId: string,
  index: NumberedIndex,
  keys: number[],
  compiled: CompiledFilters | null,
): Promise<Map<number, string>> {
  const docnums = keys.filter((key) => key < index.base);
  const stagedKeys = new Map(keys.filter((key) => key >= index.base).map((key) => [index.stagedIds[key - index.base]!, key]));
  const ids = new Map<number, string>();
  if (!compiled) {
    if (docnums.length > 0) {
      const rows = await query(
        em,
        sql<{
          docnum: number;
          memory_id: string;
        }>`select docnum, memory_id from lexical_docs
            where org_id = ${orgId} and docnum = any(${docnums}::int[]) and ${sameNumbering(orgId, index)}`,
      );
      for (const r of rows) ids.set(r.docnum, r.memory_id);
    }
    for (const [id, key] of stagedKeys) ids.set(key, id);
    return ids;
  }
  const rows = await query(
    em,
    sql<{ docnum: number | null; memory_id: string }>`
      select d.docnum, d.memory_id from lexical_docs d
       where d.org_id = ${orgId} and d.docnum = any(${docnums}::int[]) and ${memoryPasses(compiled, 'd')} and ${sameNumbering(orgId, index)}
      union all
      select null, m.id from memories m where m.org_id = ${orgId} and m.id = any(${[...stagedKeys.keys()]}::uuid[]) and ${compiled.where}`,
  );
  for (const r of rows) ids.set(r.docnum ?? stagedKeys.get(r.memory_id)!, r.memory_id);
  return ids;
}
