import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { K1 } from '../../domain/search/bm25.ts';
import { THREAD_SHARE, threadScores, withThreadTerms } from '../../domain/search/thread-terms.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';
import { query, sql } from '../../domain/sql.ts';

// Hybrid search scores each thread as one document by the query's words its listed chunks hold, and raises the
// fused hits of the threads that hold the most of them (domain/search/thread-terms.ts).
let stack: Stack;
let a: SignedUp;

beforeAll(async () => {
  stack = await startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const save = async (content: string, metadata?: Record<string, unknown>, namespace = 'chat'): Promise<string> => {
  const res = await stack.api.post('/api/memories', { token: a.token, body: { content, namespace, ...(metadata ? { metadata } : {}) } });
  expect(res.status).toBe(201);
  return res.body.id;
};
const turn = (thread: string, index: number) => ({ parent_ref: thread, chunk_index: index });
const saturated = (weight: number, tf: number) => (weight * tf) / (tf + K1);

describe('thread terms', () => {
  it("sums a term's frequencies over a thread's listed chunks and saturates them once, as one document", () => {
    const weights = new Map([
      ['beach', 4],
      ['picnic', 2],
    ]);
    const scores = threadScores(
      [
        { thread: 't1', text: 'We walked to the beach, the beach was empty.' },
        { thread: 't1', text: 'Then a picnic by the beach.' },
        { thread: 't1', text: null },
        { thread: 't2', text: 'A picnic in the park.' },
        { thread: 't3', text: 'Nothing about it here.' },
      ],
      weights,
    );
    expect(scores.get('t1')).toBeCloseTo(saturated(4, 3) + saturated(2, 1), 10);
    expect(scores.get('t2')).toBeCloseTo(saturated(2, 1), 10);
    expect(scores.has('t3')).toBe(false);
  });

  it("raises each fused hit by its thread's score as a share of the query's ceiling, and leaves memories outside threads alone", async () => {
    const beach = await save('Sam: We drove to the beach on Saturday.', turn('trip', 0));
    const picnic = await save('Sam: The kids loved the picnic.', turn('trip', 1));
    const quiet = await save('Sam: It rained all afternoon.', turn('trip', 2));
    const other = await save('Lee: The beach was crowded.', turn('other', 0));
    const alone = await save('A beach picnic checklist: towels, sandwiches, sunscreen.');
    const fused = [alone, other, beach, picnic, quiet].map((id, i) => ({ id, score: 1 - i / 10, foundBy: ['lexical' as const] }));
    const weights = new Map([
      ['beach', 3],
      ['picnic', 3],
    ]);
    // What a thread's score is measured against: the query's ceiling, the sum of its terms' weights.
    const ceiling = 6;
    const words = { ranked: [alone, other, beach, picnic].map((id) => ({ id, score: 1 })), weights, ceiling };
    const { ranked, gains, threadScores: scores } = await withThreadTerms(stack.orm.em.fork(), a.org.id, fused, words);
    const trip = saturated(3, 1) * 2;
    // Each raised hit carries its thread's score, which its relevance reads as its words.
    expect(scores.get(quiet)).toBeCloseTo(trip, 10);
    expect(scores.get(other)).toBeCloseTo(saturated(3, 1), 10);
    expect(scores.has(alone)).toBe(false);
    expect(gains.get(beach)).toBeCloseTo((THREAD_SHARE * trip) / ceiling, 10);
    expect(gains.get(picnic)).toBeCloseTo((THREAD_SHARE * trip) / ceiling, 10);
    // A chunk of a scored thread gains though its own text was not listed.
    expect(gains.get(quiet)).toBeCloseTo((THREAD_SHARE * trip) / ceiling, 10);
    // The best of the threads that hold a word of the query gains by what it holds, not by being the best.
    expect(gains.get(other)).toBeCloseTo((THREAD_SHARE * saturated(3, 1)) / ceiling, 10);
    expect(gains.has(alone)).toBe(false);
    // 0.8, 0.9, 0.7, 1.0 and 0.6 fused, raised by 0.34 (both words), 0.17 (one word) or nothing.
    expect(ranked.map((r) => r.id)).toEqual([beach, other, picnic, alone, quiet]);
  });

  it('shows what a hybrid hit gained from its thread in explain, and leaves lexical search as it was', async () => {
    const ids = [
      await save('Ana: We finally booked the lighthouse tour.', turn('holiday', 0), 'travel'),
      await save('Ben: Great, and the ferry leaves at nine.', turn('holiday', 1), 'travel'),
    ];
    const embedded = sql<{ n: number }>`select count(*)::int as n from memory_embeddings where memory_id = any(${ids}::uuid[])`;
    await eventually(async () => (await query(stack.orm.em.fork(), embedded))[0]!.n === 2, 60_000);
    const search = (mode: string) =>
      stack.api.post('/api/memories/search', {
        token: a.token,
        body: { query: 'lighthouse ferry', mode, namespace: 'travel', k: 5, explain: true },
      });
    type Hit = { id: string; explain: { thread_terms?: number; relevance_inputs: { lexical: number } } };
    const hybrid = (await search('hybrid')).body.hits as Hit[];
    expect(hybrid.map((h) => h.id).sort()).toEqual([...ids].sort());
    for (const h of hybrid) {
      // Its thread holds both words once: 1 / (1 + k1) of the query's ceiling.
      expect(h.explain.thread_terms).toBeCloseTo(THREAD_SHARE / (1 + K1), 10);
      // Each turn holds one of the two words; its relevance reads its thread's words, which hold both once: the share
      // of the query's ceiling that a document holding every term once, with no length norm, scores.
      expect(h.explain.relevance_inputs.lexical).toBeCloseTo(1 / (1 + K1), 10);
    }
    const lexical = (await search('lexical')).body.hits as { explain: { thread_terms?: number } }[];
    expect(lexical.every((h) => h.explain.thread_terms === undefined)).toBe(true);
  });
});
