import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIME_ANSWER_GAIN, withTimeAnswers } from '../../domain/search/answer-type.ts';
import { query, sql } from '../../domain/sql.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// Hybrid search raises the hits that state a time when the question asks for one (domain/search/answer-type.ts).
let stack: Stack;
let a: SignedUp;

beforeAll(async () => {
  stack = await startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const save = async (content: string, namespace: string): Promise<string> => {
  const res = await stack.api.post('/api/memories', { token: a.token, body: { content, namespace } });
  expect(res.status).toBe(201);
  return res.body.id;
};

describe('time answers', () => {
  it('raises the fused hits whose text states a time, when the question asks for one', async () => {
    const stating = [
      'Shipped the importer last Friday.',
      'The standup is daily at 9:30.',
      'We went camping two weekends ago.',
      'Renewal is due in March.',
      'I signed up for pottery yesterday.',
      'The office moved in 2021.',
      'She adopted another dog the other day.',
      'Every Tuesday we review the roadmap.',
    ];
    const silent = ['The importer lives in ops/import.', 'I may come along.', 'Pottery is like therapy for me.'];
    const ids = [];
    for (const content of [...silent, ...stating]) ids.push(await save(content, 'kinds'));
    // Silent first, each a little ahead of the next.
    const fused = ids.map((id, i) => ({ id, score: 1 - i / 100, foundBy: ['lexical' as const] }));
    const asked = await withTimeAnswers(stack.orm.em.fork(), a.org.id, 'When did we ship the importer?', fused);
    expect([...asked.gains].sort()).toEqual(ids.slice(silent.length).sort());
    expect(asked.ranked.map((r) => r.id)).toEqual([...ids.slice(silent.length), ...ids.slice(0, silent.length)]);
    expect(asked.ranked[0]!.score).toBeCloseTo(1 - silent.length / 100 + TIME_ANSWER_GAIN, 10);
    // A question of another kind changes nothing, and reads no row.
    const other = await withTimeAnswers(stack.orm.em.fork(), a.org.id, 'Where does the importer live?', fused);
    expect(other.ranked).toEqual(fused);
    expect(other.gains.size).toBe(0);
  });

  it("shows the gain in a hybrid hit's explain, and leaves lexical search and other questions alone", async () => {
    const ids = [
      await save('We moved the office to the old bakery.', 'office'),
      await save('The office move happened last March.', 'office'),
    ];
    const embedded = sql<{ n: number }>`select count(*)::int as n from memory_embeddings where memory_id = any(${ids}::uuid[])`;
    await eventually(async () => (await query(stack.orm.em.fork(), embedded))[0]!.n === ids.length, 60_000);
    type Hit = { id: string; score: number; explain: { time_answer?: number; fused?: number } };
    const search = async (q: string, mode: string) =>
      (
        await stack.api.post('/api/memories/search', {
          token: a.token,
          body: { query: q, mode, namespace: 'office', k: 5, explain: true, resolve_time: false },
        })
      ).body.hits as Hit[];
    const hybrid = await search('when did we move the office?', 'hybrid');
    const [bakery, march] = ids.map((id) => hybrid.find((h) => h.id === id)!) as [Hit, Hit];
    expect(march.explain.time_answer).toBe(TIME_ANSWER_GAIN);
    expect(march.explain.fused).toBe(march!.score);
    expect(bakery.explain.time_answer).toBeUndefined();
    const where = await search('where did we move the office to?', 'hybrid');
    expect(where.every((h) => h.explain.time_answer === undefined)).toBe(true);
    const lexical = await search('when did we move the office?', 'lexical');
    expect(lexical.every((h) => h.explain.time_answer === undefined)).toBe(true);
  });
});
