import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCranfield } from '../../bench/quality/collections.ts';
import { Bm25Reference } from '../support/bm25-reference.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

let stack: Stack;
let a: SignedUp;
const reference = new Bm25Reference();
const ids = new Map<string, string>(); // cranfield doc id -> memory id
const DATA = new URL('../../../shared/data', import.meta.url).pathname;

beforeAll(async () => {
  stack = await startStack({ relay: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  const cranfield = loadCranfield(DATA);
  // 150 real abstracts, saved through the API; the reference indexes exactly what was stored.
  for (const doc of cranfield.docs.slice(0, 150)) {
    const res = await stack.api.post('/api/memories', {
      token: a.token,
      body: {
        content: doc.text,
        namespace: Number(doc.id) % 2 ? 'odd' : 'even',
        tags: [`d${Number(doc.id) % 3}`],
        metadata: { doc: Number(doc.id) },
      },
    });
    ids.set(doc.id, res.body.id);
    reference.add(res.body.id, res.body.content);
  }
}, 120_000);
afterAll(async () => stack?.close());

const search = (body: unknown) => stack.api.post('/api/memories/search', { token: a.token, body });

function expectSameRanking(hits: { id: string; score: number }[], expected: { id: string; score: number }[]) {
  expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id));
  hits.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
}

const QUERIES = [
  'boundary layer transition',
  'supersonic flow over a flat plate with heat transfer',
  'What similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft?',
  'shock wave shock',
  'pressure',
];

describe('BM25 search', () => {
  it.each(QUERIES)('ranks %j exactly as an independent BM25 computation', async (q) => {
    const res = await search({ query: q, k: 20 });
    expect(res.status).toBe(200);
    expect(res.body.hits.length).toBeGreaterThan(0);
    expectSameRanking(res.body.hits, reference.search(q, 20));
  });

  it('keeps statistics right through edits and deletes, and finds a new memory at once', async () => {
    const [first, second] = [...ids.values()];
    await stack.api.patch(`/api/memories/${first}`, { token: a.token, body: { content: 'zyxwv boundary layer suction boundary layer' } });
    reference.add(first!, 'zyxwv boundary layer suction boundary layer');
    await stack.api.delete(`/api/memories/${second}`, { token: a.token });
    reference.remove(second!);
    const created = await stack.api.post('/api/memories', { token: a.token, body: { content: 'qwerty supersonic boundary' } });
    reference.add(created.body.id, created.body.content);
    const fresh = await search({ query: 'qwerty' });
    expect(fresh.body.hits.map((h: { id: string }) => h.id)).toEqual([created.body.id]);
    for (const q of ['boundary layer suction', 'zyxwv supersonic', ...QUERIES.slice(0, 2)]) {
      expectSameRanking((await search({ query: q, k: 25 })).body.hits, reference.search(q, 25));
    }
  });

  it('combines every filter with the ranking', async () => {
    const q = 'flow pressure distribution';
    const all = reference.search(q, 10_000);
    const byId = new Map(all.map((h) => [h.id, h]));
    const memories = (await stack.api.post('/api/memories/list', { token: a.token, body: { limit: 500 } })).body.memories as {
      id: string;
      namespace: string;
      tags: string[];
      metadata: { doc?: number };
      created_at: number;
    }[];
    const expectFiltered = async (filter: Record<string, unknown>, keep: (m: (typeof memories)[number]) => boolean) => {
      const expected = memories.filter((m) => byId.has(m.id) && keep(m)).map((m) => byId.get(m.id)!);
      expected.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1));
      const res = await search({ query: q, k: 50, ...filter });
      expect(res.status).toBe(200);
      expectSameRanking(res.body.hits, expected.slice(0, 50));
    };
    await expectFiltered({ namespace: 'odd' }, (m) => m.namespace === 'odd');
    await expectFiltered({ tags: ['d1'] }, (m) => m.tags.includes('d1'));
    await expectFiltered({ metadata_filter: { doc: 12 } }, (m) => m.metadata.doc === 12);
    const middle = [...memories].sort((x, y) => x.created_at - y.created_at)[75]!.created_at;
    await expectFiltered({ created_after: middle }, (m) => m.created_at >= middle);
    await expectFiltered({ created_before: middle, namespace: 'even' }, (m) => m.created_at <= middle && m.namespace === 'even');
    expect((await search({ query: q, namespace: 'no-such-project' })).body.hits).toEqual([]);
  });

  it('returns nothing for stop words only and validates k and query', async () => {
    expect((await search({ query: 'the of and' })).body.hits).toEqual([]);
    for (const body of [{ query: '' }, { query: 'x', k: 0 }, { query: 'x', k: 51 }, {}, { query: 'x', namespace: '' }]) {
      expect((await search(body)).status).toBe(400);
    }
  });

  it("never returns another org's memories", async () => {
    const b = await signUp(stack.api);
    await stack.api.post('/api/memories', { token: b.token, body: { content: 'boundary layer secret of org b' } });
    const hits = (await search({ query: 'boundary layer secret', k: 50 })).body.hits as { content: string }[];
    expect(hits.some((h) => h.content.includes('org b'))).toBe(false);
    const theirs = await stack.api.post('/api/memories/search', { token: b.token, body: { query: 'boundary layer' } });
    expect(theirs.body.hits).toHaveLength(1);
  });

  it('answers an org that has no memories yet with no hits (its statistics are all zero)', async () => {
    const empty = await signUp(stack.api);
    const res = await stack.api.post('/api/memories/search', { token: empty.token, body: { query: 'boundary layer' } });
    expect(res.status).toBe(200);
    expect(res.body.hits).toEqual([]);
  });
});

describe('POST /api/memories/search/bulk and GET /api/memories?q=', () => {
  it('answers each query in order with k hits', async () => {
    const queries = ['pressure', 'heat transfer', 'the', 'shock'];
    const res = await stack.api.post('/api/memories/search/bulk', { token: a.token, body: { queries, k: 3 } });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { query: string }) => r.query)).toEqual(queries);
    res.body.results.forEach((r: { query: string; hits: { id: string; score: number }[] }) =>
      expectSameRanking(r.hits, reference.search(r.query, 3)),
    );
    const namespaced = await stack.api.post('/api/memories/search/bulk', {
      token: a.token,
      body: { queries: ['pressure'], namespace: 'odd' },
    });
    expect(namespaced.body.results[0].hits).toHaveLength(5);
    expect(namespaced.body.results[0].hits.every((h: { namespace: string }) => h.namespace === 'odd')).toBe(true);
  });

  it('enforces its bounds', async () => {
    const tooMany = Array.from({ length: 26 }, (_, i) => `q${i}`);
    for (const body of [{ queries: tooMany }, { queries: [] }, { queries: ['x'], k: 51 }, { queries: ['x'], k: 0 }, { queries: 'x' }]) {
      expect((await stack.api.post('/api/memories/search/bulk', { token: a.token, body })).status).toBe(400);
    }
    expect((await stack.api.post('/api/memories/search/bulk', { token: a.token, body: { queries: tooMany.slice(1) } })).status).toBe(200);
  });

  it('serves the legacy list with q as a plain array of scored rows', async () => {
    const res = await stack.api.get('/api/memories?q=heat%20transfer&limit=5', { token: a.token });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expectSameRanking(res.body, reference.search('heat transfer', 5));
    const page2 = await stack.api.get('/api/memories?q=heat%20transfer&limit=5&offset=5', { token: a.token });
    expectSameRanking(page2.body, reference.search('heat transfer', 10).slice(5));
  });
});
