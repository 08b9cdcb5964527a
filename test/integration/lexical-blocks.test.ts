import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCranfield } from '../../bench/quality/collections.ts';
import { decodeBlock } from '../../domain/search/blocks.ts';
import { compactPostings, foldPostings, scheduleFolds } from '../../domain/search/fold.ts';
import { compileFilters } from '../../domain/store/filters.ts';
import { analyze } from '../../domain/store/analyzer.ts';
import { blockCache, lexicalRanking } from '../../domain/search/lexical.ts';
import { bumpCounters } from '../../domain/counters.ts';
import { NAMESPACE_COUNTERS, ORG_COUNTERS } from '../../domain/store/counters.ts';
import { query, sql } from '../../domain/sql.ts';
import { Bm25Reference } from '../support/bm25-reference.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// Search over folded blocks, staged rows and tombstones together, against the in-memory BM25 oracle. The relay
// is off, so nothing folds but these tests (the curator's folding is covered through the API in search tests
// of the whole stack).
let stack: Stack;
let a: SignedUp;
const reference = new Bm25Reference();
const memories = new Map<string, { namespace: string; tags: string[]; doc: number; content: string }>();
const DATA = new URL('../../../shared/data', import.meta.url).pathname;
const docs = loadCranfield(DATA).docs.slice(0, 160);

const save = async (doc: (typeof docs)[number]) => {
  const namespace = Number(doc.id) % 2 ? 'odd' : 'even';
  const tags = [`d${Number(doc.id) % 3}`];
  const res = await stack.api.post('/api/memories', {
    token: a.token,
    body: { content: doc.text, namespace, tags, metadata: { doc: Number(doc.id) } },
  });
  expect(res.status).toBe(201);
  reference.add(res.body.id, res.body.content);
  memories.set(res.body.id, { namespace, tags, doc: Number(doc.id), content: res.body.content });
  return res.body.id as string;
};
const fold = () => foldPostings(stack.orm.em.fork(), a.org.id);
const count = async (from: string) =>
  (await query(stack.orm.em.fork(), sql<{ n: number }>`select count(*)::int as n from ${sql.table(from)} where org_id = ${a.org.id}`))[0]!
    .n;

beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  // Three folds of 40 memories each (so blocks get merged), then 40 left staged.
  for (let round = 0; round < 4; round++) {
    for (const doc of docs.slice(round * 40, round * 40 + 40)) await save(doc);
    if (round < 3) expect(await fold()).toBe(40);
  }
}, 180_000);
afterAll(async () => stack?.close());

const QUERIES = [
  'boundary layer transition',
  'supersonic flow over a flat plate with heat transfer',
  'shock wave shock',
  'pressure',
  'the effect of viscosity on lift',
];

async function expectAsOracle(label: string) {
  for (const q of QUERIES) {
    const res = await stack.api.post('/api/memories/search', { token: a.token, body: { query: q, k: 20 } });
    expect(res.status, label).toBe(200);
    const expected = reference.search(q, 20);
    expect(
      res.body.hits.map((h: { id: string }) => h.id),
      `${label}: ${q}`,
    ).toEqual(expected.map((e) => e.id));
    res.body.hits.forEach((h: { score: number }, i: number) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
  }
  // Filters, checked on the candidates in score order: the best k of those that match.
  const q = 'flow pressure distribution';
  const all = reference.search(q, 10_000);
  const filters: [Record<string, unknown>, (m: { namespace: string; tags: string[]; doc: number }) => boolean][] = [
    [{ namespace: 'odd' }, (m) => m.namespace === 'odd'],
    [{ tags: ['d1'] }, (m) => m.tags.includes('d1')],
    [{ namespace: 'even', tags: ['d2'] }, (m) => m.namespace === 'even' && m.tags.includes('d2')],
    [{ metadata_filter: { doc: 12 } }, (m) => m.doc === 12],
  ];
  for (const [filter, keep] of filters) {
    const expected = all.filter((h) => keep(memories.get(h.id)!)).slice(0, 5);
    const res = await stack.api.post('/api/memories/search', { token: a.token, body: { query: q, k: 5, ...filter } });
    expect(
      res.body.hits.map((h: { id: string }) => h.id),
      `${label}: ${JSON.stringify(filter)}`,
    ).toEqual(expected.map((e) => e.id));
  }
  // Hybrid's lexical list in a namespace: BM25 with the namespace's statistics, as an index of its memories alone.
  for (const namespace of ['odd', 'even']) {
    const oracle = new Bm25Reference();
    for (const [id, m] of memories) if (m.namespace === namespace) oracle.add(id, m.content);
    const compiled = await compileFilters(stack.orm.em.fork(), a.org.id, { namespace });
    for (const q of QUERIES) {
      const ranked = (await lexicalRanking(stack.orm.em.fork(), a.org.id, analyze(q), 20, compiled, { statistics: 'namespace' })).ranked;
      const expected = oracle.search(q, 20);
      expect(
        ranked.map((r) => r.id),
        `${label}: ${namespace}'s statistics, ${q}`,
      ).toEqual(expected.map((e) => e.id));
      ranked.forEach((r, i) => expect(r.score).toBeCloseTo(expected[i]!.score, 9));
    }
  }
}

describe('lexical search over postings blocks', () => {
  it('ranks folded and staged memories together exactly as the oracle', async () => {
    expect(await count('lexical_docs')).toBe(120);
    expect(await count('lexical_blocks')).toBeGreaterThan(0);
    await expectAsOracle('three folds, 40 staged');
  });

  it("reads a long question by its rarest terms when asked (hybrid's lexical list), as a question of those terms alone", async () => {
    // A whole abstract as the question: more distinct terms than are kept.
    const terms = analyze(docs[7]!.text);
    const distinct = [...new Set(terms)].filter((t) => reference.df(t) > 0);
    expect(distinct.length).toBeGreaterThan(12);
    const rarest = new Set([...distinct].sort((x, y) => reference.df(x) - reference.df(y) || (x < y ? -1 : x > y ? 1 : 0)).slice(0, 12));
    const compiled = await compileFilters(stack.orm.em.fork(), a.org.id, {});
    const kept = (await lexicalRanking(stack.orm.em.fork(), a.org.id, terms, 20, compiled, { rarest: 12 })).ranked;
    const alone = (
      await lexicalRanking(
        stack.orm.em.fork(),
        a.org.id,
        terms.filter((t) => rarest.has(t)),
        20,
        compiled,
      )
    ).ranked;
    expect(kept).toEqual(alone);
    expect(kept).not.toEqual((await lexicalRanking(stack.orm.em.fork(), a.org.id, terms, 20, compiled)).ranked);
    // A question of no more terms than that is read whole.
    const short = analyze(QUERIES[1]!);
    expect((await lexicalRanking(stack.orm.em.fork(), a.org.id, short, 20, compiled, { rarest: 12 })).ranked).toEqual(
      (await lexicalRanking(stack.orm.em.fork(), a.org.id, short, 20, compiled)).ranked,
    );
  });

  it("has the worker's start signal the curator of an org with postings staged, and no other", async () => {
    const idle = await signUp(stack.api);
    const curateRows = async (orgId: string) =>
      (
        await query(
          stack.orm.em.fork(),
          sql<{ n: number }>`select count(*)::int as n from outbox where org_id = ${orgId} and description = 'fold the postings staged'`,
        )
      )[0]!.n;
    expect(await scheduleFolds(stack.orm.em.fork())).toBeGreaterThanOrEqual(1);
    expect(await curateRows(a.org.id)).toBe(1);
    expect(await curateRows(idle.org.id)).toBe(0);
  });

  it('keeps blocks small in number as folds merge them', async () => {
    const perTerm = await query(
      stack.orm.em.fork(),
      sql<{
        n: number;
      }>`select max(c)::int as n from (select count(*) as c from lexical_blocks where org_id = ${a.org.id} group by term) s`,
    );
    // Three folds of 40 memories: each new block merges with the ones before it while they are at most twice its size.
    expect(perTerm[0]!.n).toBeLessThanOrEqual(3);
    const blocks = await query(
      stack.orm.em.fork(),
      sql<{ docs: number; wide: boolean; data: Buffer }>`select docs, wide, data from lexical_blocks where org_id = ${a.org.id}`,
    );
    const postings = blocks.reduce((sum, b) => sum + decodeBlock(b).docnums.length, 0);
    expect(postings).toBe(
      (await query(stack.orm.em.fork(), sql<{ n: number }>`select sum(docs)::int as n from lexical_blocks where org_id = ${a.org.id}`))[0]!
        .n,
    );
  });

  it('tombstones folded memories that are edited, moved or deleted, and compacts them away', async () => {
    const folded = (
      await query(
        stack.orm.em.fork(),
        sql<{ memory_id: string }>`select memory_id from lexical_docs where org_id = ${a.org.id} order by docnum limit 3`,
      )
    ).map((r) => r.memory_id);
    const [edited, moved, deleted] = folded as [string, string, string];
    const content = 'pressure distribution over a swept wing in supersonic flow, measured again';
    expect((await stack.api.patch(`/api/memories/${edited}`, { token: a.token, body: { content } })).status).toBe(200);
    reference.add(edited, content);
    memories.get(edited)!.content = content;
    const to = memories.get(moved)!.namespace === 'odd' ? 'even' : 'odd';
    expect((await stack.api.patch(`/api/memories/${moved}`, { token: a.token, body: { namespace: to } })).status).toBe(200);
    memories.get(moved)!.namespace = to;
    expect((await stack.api.delete(`/api/memories/${deleted}`, { token: a.token })).status).toBe(204);
    reference.remove(deleted);
    memories.delete(deleted);
    // The edit and the delete leave tombstones; the move only changes the row the filter reads.
    expect(await count('lexical_tombstones')).toBe(2);
    await expectAsOracle('tombstones, before folding');

    await fold();
    expect(await count('lexical_staged')).toBe(0);
    await expectAsOracle('everything folded');

    expect(await compactPostings(stack.orm.em.fork(), a.org.id)).toBe(0); // under the limit: left alone
    expect(await compactPostings(stack.orm.em.fork(), a.org.id, true)).toBe(2);
    expect(await count('lexical_tombstones')).toBe(0);
    const blocks = await query(
      stack.orm.em.fork(),
      sql<{ docs: number; wide: boolean; data: Buffer }>`select docs, wide, data from lexical_blocks where org_id = ${a.org.id}`,
    );
    const live = new Set(
      (await query(stack.orm.em.fork(), sql<{ docnum: number }>`select docnum from lexical_docs where org_id = ${a.org.id}`)).map(
        (r) => r.docnum,
      ),
    );
    for (const b of blocks) for (const d of decodeBlock(b).docnums) expect(live.has(d)).toBe(true);
    await expectAsOracle('compacted');
  });

  it('serves a repeated search from the cache of blocks, and reads a block again once a fold or a compaction rewrote it', async () => {
    // Every search of this file went through the same process's cache, folds and compaction included; here is
    // what it kept and what it read.
    const search = async () => {
      const before = { hits: blockCache.hits, misses: blockCache.misses };
      const res = await stack.api.post('/api/memories/search', { token: a.token, body: { query: 'supersonic pressure', k: 20 } });
      expect(res.body.hits.map((h: { id: string }) => h.id)).toEqual(reference.search('supersonic pressure', 20).map((e) => e.id));
      return { hits: blockCache.hits - before.hits, misses: blockCache.misses - before.misses };
    };
    await search();
    const warm = await search();
    expect(warm.misses).toBe(0);
    expect(warm.hits).toBeGreaterThan(0);

    // A fold merges the terms' newest blocks with the new postings: those blocks come anew, the rest from the cache.
    await save({ id: '9001', text: 'supersonic pressure measured on a cone' } as (typeof docs)[number]);
    await fold();
    const merged = await search();
    expect(merged.misses).toBeGreaterThan(0);
    expect(merged.hits).toBeGreaterThan(0);

    // A compaction rewrites the blocks that hold a tombstone; their new versions are read,
    // not the kept copies. The oldest folded memory about pressure sits in a block of many postings.
    const [{ memory_id: victim }] = (await query(
      stack.orm.em.fork(),
      sql<{ memory_id: string }>`select d.memory_id from lexical_docs d join memories m on m.org_id = d.org_id and m.id = d.memory_id
        where d.org_id = ${a.org.id} and m.content ilike '%pressure%' order by d.docnum limit 1`,
    )) as [{ memory_id: string }];
    expect((await stack.api.delete(`/api/memories/${victim}`, { token: a.token })).status).toBe(204);
    reference.remove(victim);
    memories.delete(victim);
    expect(await compactPostings(stack.orm.em.fork(), a.org.id, true)).toBe(1);
    expect((await search()).misses).toBeGreaterThan(0);
    expect((await search()).misses).toBe(0);
    await expectAsOracle('after the cache saw merges and a compaction');
  });

  it('scores every posting again when one of the best turns out deleted after the index was read', async () => {
    // MaxScore keeps only what can be among the best k. A memory deleted between the search's reading of the
    // index and its reading of the ids is missing from the second: what the window looks like is staged here by
    // removing the document's row alone, then putting it back.
    const q = 'boundary layer transition';
    const ranked = reference.search(q, 4);
    const docsOf = await query(
      stack.orm.em.fork(),
      sql<{
        docnum: number;
        memory_id: string;
        namespace_id: string;
      }>`select docnum, memory_id, namespace_id from lexical_docs
        where org_id = ${a.org.id} and memory_id = any(${ranked.map((r) => r.id)}::uuid[])`,
    );
    // One of the best 3 that is folded (every memory is by now).
    const gone = ranked.slice(0, 3).flatMap((r) => docsOf.filter((d) => d.memory_id === r.id))[0]!;
    await query(stack.orm.em.fork(), sql`delete from lexical_docs where org_id = ${a.org.id} and docnum = ${gone.docnum}`);
    try {
      const res = await stack.api.post('/api/memories/search', { token: a.token, body: { query: q, k: 3 } });
      expect(res.body.hits.map((h: { id: string }) => h.id)).toEqual(
        ranked
          .filter((r) => r.id !== gone.memory_id)
          .slice(0, 3)
          .map((r) => r.id),
      );
    } finally {
      await query(
        stack.orm.em.fork(),
        sql`insert into lexical_docs (org_id, docnum, memory_id, namespace_id)
          values (${a.org.id}, ${gone.docnum}, ${gone.memory_id}, ${gone.namespace_id})`,
      );
    }
    await expectAsOracle('with the document row back');
  });

  it("finishes a selective filter from the filter's side, with the same hits", async () => {
    // 400 memories that all hold the query's term (more candidates than the first check takes), 4 of them tagged.
    const b = await signUp(stack.api);
    const oracle = new Bm25Reference();
    const tagged = new Set<string>();
    const words = ['comet', 'tail', 'ion', 'dust', 'nucleus', 'coma', 'perihelion', 'orbit'];
    for (let start = 0; start < 400; start += 8) {
      await Promise.all(
        Array.from({ length: 8 }, async (_, j) => {
          const i = start + j;
          const content = `comet ${words.slice(0, 1 + (i % 8)).join(' ')} observation ${i}`;
          const tags = i % 100 === 7 ? ['rare'] : ['common'];
          const res = await stack.api.post('/api/memories', { token: b.token, body: { content, tags } });
          expect(res.status).toBe(201);
          oracle.add(res.body.id, res.body.content);
          if (tags[0] === 'rare') tagged.add(res.body.id);
        }),
      );
      if (start === 200) await foldPostings(stack.orm.em.fork(), b.org.id);
    }
    for (const k of [1, 3, 10]) {
      const res = await stack.api.post('/api/memories/search', { token: b.token, body: { query: 'comet coma', k, tags: ['rare'] } });
      const expected = oracle
        .search('comet coma', 400)
        .filter((h) => tagged.has(h.id))
        .slice(0, k);
      expect(res.body.hits.map((h: { id: string }) => h.id)).toEqual(expected.map((e) => e.id));
    }
  });

  it('searches a namespace from its own documents, and a large one from the best candidates its share calls for, or from every posting when they all lie outside it', async () => {
    // 150 memories in `near` match strongly, 150 in `far` weakly. Through the API, each namespace is read whole.
    // Not read whole (as a namespace that is a large share of a large org would not be), the first round for
    // `far` (the best 36 by MaxScore) finds none of it, and the search scores every posting instead.
    const c = await signUp(stack.api);
    const oracle = new Bm25Reference();
    const namespaceOf = new Map<string, string>();
    for (let start = 0; start < 300; start += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, j) => {
          const i = start + j;
          const near = i % 2 === 0;
          const content = near
            ? `glacier glacier melt ${i}`
            : `glacier survey notes ${i} ${'with many other words about the field season '.repeat(1 + (i % 4))}`;
          const namespace = near ? 'near' : 'far';
          const res = await stack.api.post('/api/memories', { token: c.token, body: { content, namespace } });
          expect(res.status).toBe(201);
          oracle.add(res.body.id, res.body.content);
          namespaceOf.set(res.body.id, namespace);
        }),
      );
      if (start === 200) await foldPostings(stack.orm.em.fork(), c.org.id);
    }
    for (const namespace of ['near', 'far']) {
      const compiled = await compileFilters(stack.orm.em.fork(), c.org.id, { namespace });
      for (const k of [1, 5]) {
        const res = await stack.api.post('/api/memories/search', { token: c.token, body: { query: 'glacier', k, namespace } });
        const expected = oracle
          .search('glacier', 300)
          .filter((h) => namespaceOf.get(h.id) === namespace)
          .slice(0, k);
        expect(
          res.body.hits.map((h: { id: string }) => h.id),
          `${namespace}, k ${k}`,
        ).toEqual(expected.map((e) => e.id));
        // The same search as for a namespace too large to be read whole.
        const large = (
          await lexicalRanking(stack.orm.em.fork(), c.org.id, analyze('glacier'), k, compiled, { namespaceRead: 'candidates' })
        ).ranked;
        expect(
          large.map((r) => r.id),
          `${namespace} not read whole, k ${k}`,
        ).toEqual(expected.map((e) => e.id));
      }
    }
  });

  it('reads a namespace whole while its share of the org is small enough for the depth of the list and the filter, and not beyond', async () => {
    // The choice is made in the statement from the counters (wholeNamespace in lexical.ts): with the namespace's
    // statistics asked for, a namespace read whole is scored with them and one that is not with the org's, so the
    // scores tell which way was taken. The counters are raised to stand for an org of a million memories. Every
    // memory carries the tag `lamp`, so a filter on it passes them all but is more than the namespace.
    const c = await signUp(stack.api);
    for (let i = 0; i < 40; i++) {
      const namespace = i % 4 === 0 ? 'small' : 'large';
      expect(
        (
          await stack.api.post('/api/memories', {
            token: c.token,
            body: { content: `lantern ${i % 3 === 0 ? 'lantern ' : ''}harbour ${i}`, namespace, tags: ['lamp'] },
          })
        ).status,
      ).toBe(201);
    }
    await foldPostings(stack.orm.em.fork(), c.org.id);
    const ids = new Map(
      (await query(stack.orm.em.fork(), sql<{ name: string; id: string }>`select name, id from namespaces where org_id = ${c.org.id}`)).map(
        (r) => [r.name, r.id],
      ),
    );
    const raise = (scopeId: string, name: string, by: number) =>
      bumpCounters(stack.orm.em.fork(), [{ orgId: c.org.id, scopeId, name, delta: by }]);
    await raise(c.org.id, ORG_COUNTERS.live, 1_000_000);
    // `small` stands for 30,000 (3%): read whole for k 10 (up to about 42,000) and for k 100. `large` stands for
    // 100,000 (10%): read whole for k 100 only (up to about 115,000), or with the tag filter for k 10 too (up to about
    // 119,000).
    await raise(ids.get('small')!, NAMESPACE_COUNTERS.live, 30_000 - 10);
    await raise(ids.get('large')!, NAMESPACE_COUNTERS.live, 100_000 - 30);
    const ranking = async (namespace: string, k: number, tags: string[], namespaceRead?: 'whole' | 'candidates') =>
      lexicalRanking(
        stack.orm.em.fork(),
        c.org.id,
        analyze('lantern harbour'),
        k,
        await compileFilters(stack.orm.em.fork(), c.org.id, { namespace, tags }),
        {
          statistics: 'namespace',
          ...(namespaceRead ? { namespaceRead } : {}),
        },
      );
    for (const [namespace, k, tags, way] of [
      ['small', 10, [], 'whole'],
      ['small', 100, [], 'whole'],
      ['large', 10, [], 'candidates'],
      ['large', 10, ['lamp'], 'whole'],
      ['large', 100, [], 'whole'],
    ] as const) {
      const chosen = await ranking(namespace, k, [...tags]);
      const other = way === 'whole' ? 'candidates' : 'whole';
      expect(chosen, `${namespace}, k ${k}, tags ${tags}`).toEqual(await ranking(namespace, k, [...tags], way));
      expect(chosen, `${namespace}, k ${k}, tags ${tags}`).not.toEqual(await ranking(namespace, k, [...tags], other));
    }
  });

  it("searches a user's, an agent's or a run's memories from their own documents, as it would from the candidates", async () => {
    // 60 memories, 12 of `ann` and 48 of `bob`, alternately of two agents; some folded, some staged, one of ann's
    // deleted after the fold and one moved to bob (its document must follow it). Read from the scope's documents,
    // and from the candidates checked against their rows, the search gives the oracle's ranking of the memories
    // that pass.
    const d = await signUp(stack.api);
    const oracle = new Bm25Reference();
    const owner = new Map<string, { user: string; agent: string }>();
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const user = i % 5 === 0 ? 'ann' : 'bob';
      const agent = i % 2 === 0 ? 'planner' : 'critic';
      const content = `glacier ${i % 3 === 0 ? 'glacier melt ' : ''}survey ${'notes '.repeat(i % 4)}${i}`;
      const res = await stack.api.post('/api/memories', { token: d.token, body: { content, user_id: user, agent_id: agent } });
      expect(res.status).toBe(201);
      oracle.add(res.body.id, res.body.content);
      owner.set(res.body.id, { user, agent });
      ids.push(res.body.id);
      if (i === 39) await foldPostings(stack.orm.em.fork(), d.org.id);
    }
    // Both among ann's best for the query, and folded.
    expect((await stack.api.delete(`/api/memories/${ids[30]}`, { token: d.token })).status).toBe(204);
    oracle.remove(ids[30]!);
    owner.delete(ids[30]!);
    expect((await stack.api.patch(`/api/memories/${ids[0]}`, { token: d.token, body: { user_id: 'bob' } })).status).toBe(200);
    owner.set(ids[0]!, { user: 'bob', agent: 'planner' });
    for (const [filter, passes] of [
      [{ user_id: 'ann' }, (o: { user: string }) => o.user === 'ann'],
      [{ user_id: 'bob' }, (o: { user: string }) => o.user === 'bob'],
      [{ user_id: 'ann', agent_id: 'planner' }, (o: { user: string; agent: string }) => o.user === 'ann' && o.agent === 'planner'],
      [{ agent_id: 'critic' }, (o: { agent: string }) => o.agent === 'critic'],
      [{ run_id: 'none' }, () => false],
    ] as const) {
      const compiled = await compileFilters(stack.orm.em.fork(), d.org.id, {
        userId: filter.user_id,
        agentId: 'agent_id' in filter ? filter.agent_id : undefined,
        runId: 'run_id' in filter ? filter.run_id : undefined,
      });
      for (const k of [1, 5]) {
        const expected = oracle
          .search('glacier melt', 60)
          .filter((h) => passes(owner.get(h.id)! as never))
          .slice(0, k)
          .map((h) => h.id);
        const res = await stack.api.post('/api/memories/search', { token: d.token, body: { query: 'glacier melt', k, ...filter } });
        expect(
          res.body.hits.map((h: { id: string }) => h.id),
          `${JSON.stringify(filter)}, k ${k}`,
        ).toEqual(expected);
        const candidates = (
          await lexicalRanking(stack.orm.em.fork(), d.org.id, analyze('glacier melt'), k, compiled, { namespaceRead: 'candidates' })
        ).ranked;
        expect(
          candidates.map((r) => r.id),
          `${JSON.stringify(filter)} from the candidates, k ${k}`,
        ).toEqual(expected);
      }
    }
  });

  it('leaves a memory locked by its editor for the next fold, and folds it then', async () => {
    const id = await save(docs[0]!);
    const client = new pg.Client({ connectionString: stack.config.DATABASE_URL });
    await client.connect();
    try {
      await client.query('begin');
      await client.query('select 1 from memories where org_id = $1 and id = $2 for update', [a.org.id, id]);
      expect(await fold()).toBe(0);
      await client.query('commit');
    } finally {
      await client.end();
    }
    expect(await fold()).toBe(1);
    expect(await count('lexical_staged')).toBe(0);
    await expectAsOracle('after the locked memory was folded');
  });

  it('keeps an edit or a delete that waited for a fold consistent: each finds the document number the fold gave', async () => {
    const edited = await save(docs[1]!);
    const deleted = await save(docs[2]!);
    const content = 'shock wave interaction with a boundary layer, revised';
    let editing: Promise<unknown> = Promise.resolve();
    let deleting: Promise<unknown> = Promise.resolve();
    // The fold runs inside a transaction held open (its own becomes a savepoint) while the edit and the delete
    // start: both wait for the memories' locks, then see the fold's commit.
    await stack.orm.em.fork().transactional(async (tx) => {
      expect(await foldPostings(tx, a.org.id)).toBe(2);
      editing = stack.api.patch(`/api/memories/${edited}`, { token: a.token, body: { content } });
      deleting = stack.api.delete(`/api/memories/${deleted}`, { token: a.token });
      await new Promise((r) => setTimeout(r, 500));
    });
    expect(((await editing) as { status: number }).status).toBe(200);
    expect(((await deleting) as { status: number }).status).toBe(204);
    reference.add(edited, content);
    memories.get(edited)!.content = content;
    reference.remove(deleted);
    memories.delete(deleted);
    expect(await count('lexical_tombstones')).toBe(2);
    await expectAsOracle('an edit and a delete after a concurrent fold');
    await fold();
    await expectAsOracle('and folded again');
  });
});
