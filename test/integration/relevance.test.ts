import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FRESH_EMBED_MAX } from '../../domain/search/fresh.ts';
import { RECOMMENDED_FLOOR } from '../../domain/search/relevance.ts';
import { signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// Relevance, explain and fresh results through the API with the real model. The stack runs no worker, so nothing
// is embedded in the background: every search by meaning here finds its memories through what the search itself
// embeds (domain/search/fresh.ts), as a search right after a save does.
let stack: Stack;
let a: SignedUp;

const save = (body: Record<string, unknown>) => stack.api.post('/api/memories', { token: a.token, body });
const search = (body: Record<string, unknown>) => stack.api.post('/api/memories/search', { token: a.token, body });
interface Hit {
  id: string;
  content: string;
  score: number;
  relevance: number;
  found_by: string[];
  explain?: Record<string, any>;
}

beforeAll(async () => {
  stack = await startStack({ embeddings: true, worker: false, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

describe('fresh results', () => {
  it("finds the README's memory by meaning in a search sent right after its save", async () => {
    const saved = (await save({ content: 'Deploys to production happen on Tuesdays' })).body;
    const res = await search({ query: 'what day do we ship releases', mode: 'hybrid' });
    expect(res.status).toBe(200);
    expect(res.body.hits.map((h: Hit) => h.id)).toEqual([saved.id]);
    expect(res.body.hits[0].found_by).toEqual(['semantic']);
    expect(res.body.pending_embeddings).toBe(0);
    const meaning = await search({ query: 'what day do we ship releases', mode: 'semantic' });
    expect(meaning.body.hits.map((h: Hit) => h.id)).toEqual([saved.id]);
    // Lexical search has no semantic list, hence nothing pending to report.
    const words = await search({ query: 'deploys tuesdays' });
    expect(words.body.hits.map((h: Hit) => h.id)).toEqual([saved.id]);
    expect(words.body).not.toHaveProperty('pending_embeddings');
  });

  it('embeds only the latest few of a scope, and says how many it could not score by meaning', async () => {
    const extra = 3;
    for (let i = 0; i < FRESH_EMBED_MAX + extra; i++)
      await save({ content: `Harbour crane ${i} was inspected and certified for heavy lifting`, namespace: 'port' });
    const res = await search({ query: 'which lifting equipment passed its check', mode: 'hybrid', namespace: 'port', k: 20 });
    expect(res.body.pending_embeddings).toBe(extra);
    expect(res.body.hits.filter((h: Hit) => h.found_by.includes('semantic'))).toHaveLength(FRESH_EMBED_MAX);
    // Another scope waits on none of them.
    expect((await search({ query: 'release day', mode: 'semantic', namespace: 'default' })).body.pending_embeddings).toBe(0);
  });
});

describe('relevance', () => {
  it('carries a relevance in [0, 1] on every hit of every mode, never rising down the ranking', async () => {
    for (let i = 0; i < 5; i++)
      await save({
        content: `The staging database is refreshed from production every ${['Sunday', 'Monday', 'night', 'week', 'month'][i]}`,
        namespace: 'rel',
      });
    for (const mode of ['lexical', 'semantic', 'hybrid']) {
      const res = await search({ query: 'when is the staging database refreshed', mode, namespace: 'rel', k: 5 });
      const relevance = (res.body.hits as Hit[]).map((h) => h.relevance);
      expect(relevance).toHaveLength(5);
      for (const [i, r] of relevance.entries()) {
        expect(r).toBeGreaterThanOrEqual(0);
        expect(r).toBeLessThanOrEqual(1);
        if (i > 0) expect(r).toBeLessThanOrEqual(relevance[i - 1]!);
      }
    }
  });

  it('leaves out hits below min_relevance, and refuses a floor outside [0, 1]', async () => {
    const all = (await search({ query: 'when is the staging database refreshed', mode: 'hybrid', namespace: 'rel', k: 5 })).body
      .hits as Hit[];
    const floor = all[2]!.relevance;
    const kept = (
      await search({ query: 'when is the staging database refreshed', mode: 'hybrid', namespace: 'rel', k: 5, min_relevance: floor })
    ).body.hits as Hit[];
    expect(kept.map((h) => h.id)).toEqual(all.filter((h) => h.relevance >= floor).map((h) => h.id));
    expect((await search({ query: 'staging', min_relevance: 1 })).body.hits).toEqual([]);
    for (const bad of [-0.1, 1.5, '0.5']) {
      const res = await search({ query: 'staging', min_relevance: bad });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('min_relevance');
    }
    const bulk = await stack.api.post('/api/memories/search/bulk', {
      token: a.token,
      body: { queries: ['staging database', 'cranes'], mode: 'hybrid', min_relevance: 1 },
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.results.map((r: { hits: Hit[] }) => r.hits)).toEqual([[], []]);
  });

  it('answers nothing at the recommended floor for a question whose answer was never stored', async () => {
    const never = { query: 'what is my blood type?', mode: 'hybrid', k: 5 };
    expect((await search(never)).body.hits.length).toBeGreaterThan(0);
    expect((await search({ ...never, min_relevance: RECOMMENDED_FLOOR })).body.hits).toEqual([]);
  });

  it('keeps the legacy search rows BM25-scored, with relevance beside the score', async () => {
    const rows = (await stack.api.get('/api/memories?q=staging%20database&namespace=rel', { token: a.token })).body as Hit[];
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0]).not.toHaveProperty('found_by');
    expect(rows[0]!.score).toBeGreaterThan(1);
    expect(rows[0]!.relevance).toBeGreaterThan(0);
  });
});

describe('explain', () => {
  it("gives each hit's place and raw score in each list, the fused score, and the answer's terms and filters", async () => {
    const res = await search({ query: 'when is the staging database refreshed', mode: 'hybrid', namespace: 'rel', k: 3, explain: true });
    expect(res.body.explain).toEqual({ mode: 'hybrid', terms: ['stage', 'databas', 'refresh'], filters: { namespace: 'rel' } });
    const [first] = res.body.hits as Hit[];
    expect(first!.explain).toMatchObject({
      lexical: { rank: expect.any(Number), score: expect.any(Number) },
      semantic: { rank: expect.any(Number), score: expect.any(Number) },
      fused: first!.score,
      relevance_inputs: { lexical: expect.any(Number), semantic: expect.any(Number) },
    });
    expect(first!.explain!.semantic.rank).toBeGreaterThanOrEqual(1);
    // A lexical answer has one list, whose score is the hit's; without explain nothing is added.
    const words = (await search({ query: 'staging database', namespace: 'rel', explain: true })).body.hits as Hit[];
    expect(words[0]!.explain).toEqual({
      lexical: { rank: 1, score: words[0]!.score },
      relevance_inputs: { lexical: expect.any(Number), semantic: null },
    });
    expect((await search({ query: 'staging database', namespace: 'rel' })).body.hits[0]).not.toHaveProperty('explain');
  });
});

describe('time words', () => {
  const june = Date.UTC(2023, 5, 17);
  const august = Date.UTC(2023, 7, 5);
  const asked = Date.UTC(2023, 9, 20);
  it('ranks the memories whose event time lies in the window a question names first, in every mode', async () => {
    const longer = 'Camping in the mountains with the whole family and three friends from work';
    const inJune = (await save({ content: longer, namespace: 'trips', occurred_at: june })).body.id;
    const inAugust = (await save({ content: 'We went camping by the lake: camping, camping.', namespace: 'trips', occurred_at: august }))
      .body.id;
    const question = { query: 'where did we go camping in June?', namespace: 'trips', reference_time: asked };
    // As words only, the August memory ranks first (short, and it says camping three times).
    expect((await search({ ...question, resolve_time: false })).body.hits.map((h: Hit) => h.id)).toEqual([inAugust, inJune]);
    for (const mode of ['lexical', 'semantic', 'hybrid']) {
      const res = await search({ ...question, mode, explain: true });
      expect(res.body.hits.map((h: Hit) => h.id)).toEqual([inJune, inAugust]);
      expect(res.body.explain.time).toEqual({ phrase: 'June', after: Date.UTC(2023, 5, 1), before: Date.UTC(2023, 6, 1) - 1 });
      expect(res.body.hits[0].explain.time_window).toBe(true);
      expect(res.body.hits[1].explain).not.toHaveProperty('time_window');
    }
    // Read against another reference time, "June" is another June: no memory lies in it, and the words decide.
    const later = await search({ ...question, reference_time: Date.UTC(2025, 0, 1) });
    expect(later.body.hits.map((h: Hit) => h.id)).toEqual([inAugust, inJune]);
  });

  it('refuses a reference_time out of range, and searches time words it cannot read as words', async () => {
    for (const bad of [-1, 1e16, 'soon']) {
      const res = await search({ query: 'camping', reference_time: bad });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain('reference_time');
    }
    const vague = await search({ query: 'camping around the blue moon of Smarch', namespace: 'trips', explain: true });
    expect(vague.status).toBe(200);
    expect(vague.body.explain).not.toHaveProperty('time');
    expect(vague.body.hits.length).toBe(2);
  });
});
