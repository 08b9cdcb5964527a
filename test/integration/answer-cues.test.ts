import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  raiseByCues,
  readAnswerCues,
  shortMessageShare,
  SHORT_MESSAGE_BYTES,
  SPEAKER_SHARE,
  TIME_ANSWER_GAIN,
} from '../../domain/search/answer-cues.ts';
import { query, sql } from '../../domain/sql.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// Hybrid search raises the hits whose speaker the question names, and those that state a time when the question asks
// for one, and lowers short messages (domain/search/answer-cues.ts).
let stack: Stack;
let a: SignedUp;

beforeAll(async () => {
  stack = await startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const save = async (content: string, namespace: string, metadata?: Record<string, unknown>): Promise<string> => {
  const res = await stack.api.post('/api/memories', { token: a.token, body: { content, namespace, ...(metadata ? { metadata } : {}) } });
  expect(res.status).toBe(201);
  return res.body.id;
};
// A message long enough to keep all of its score.
const long = (text: string) => `${text} ${'And that is all there is to it. '.repeat(SHORT_MESSAGE_BYTES / 30)}`;
// Each a little behind the one before.
const fusedOf = (ids: string[]) => ids.map((id, i) => ({ id, score: 1 - i / 100, foundBy: ['lexical' as const] }));
const cues = async (question: string, ids: string[]) =>
  raiseByCues(question, fusedOf(ids), await readAnswerCues(stack.orm.em.fork(), a.org.id, question, ids));

describe('answer cues', () => {
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
    const asked = await cues('When did we ship the importer?', ids);
    expect([...asked.times].sort()).toEqual(ids.slice(silent.length).sort());
    expect(asked.ranked.map((r) => r.id)).toEqual([...ids.slice(silent.length), ...ids.slice(0, silent.length)]);
    expect(asked.ranked[0]!.score).toBeCloseTo(1 - silent.length / 100 + TIME_ANSWER_GAIN, 10);
    // A question of another kind changes nothing.
    const other = await cues('Where does the importer live?', ids);
    expect(other.ranked).toEqual(fusedOf(ids));
    expect(other.times.size).toBe(0);
  });

  it("multiplies the fused score of the messages whose speaker the question names, and of no one else's", async () => {
    const ids = [
      await save('The standup notes are in the wiki.', 'people', { name: 'Dana' }),
      await save(long('Lee: I would rather wait for the next release.'), 'people', { name: 'Lee', role: 'user' }),
      await save(long('I think the migration is worth it.'), 'people', { name: 'Dana Kim', role: 'user' }),
      await save(long('Sounds good to me.'), 'people', { name: 'dana', role: 'assistant' }),
    ];
    const asked = await cues('What does Dana think of the migration?', ids);
    // 1.00, 0.99, 0.98 and 0.97 fused; Dana's two messages times 1 + the share, whatever the case of the name; a name
    // without a role is no speaker's.
    expect(asked.speakers.get(ids[2]!)).toBeCloseTo(0.98 * SPEAKER_SHARE, 10);
    expect(asked.speakers.get(ids[3]!)).toBeCloseTo(0.97 * SPEAKER_SHARE, 10);
    expect(asked.speakers.size).toBe(2);
    expect(asked.ranked.map((r) => r.id)).toEqual([ids[2], ids[3], ids[0], ids[1]]);
    expect(asked.times.size).toBe(0);
    // A name that is part of a word, or not the name's first word, names no one.
    for (const question of ['What do the Leeds offices think?', 'What does Kim think?'])
      expect((await cues(question, ids)).speakers.size, question).toBe(0);
  });

  it('multiplies the score of a message shorter than SHORT_MESSAGE_BYTES by its share, and of no other memory', async () => {
    const ids = [
      await save('Wow, that is great!', 'short', { name: 'Ana', role: 'user' }),
      await save(long('We moved the standup to ten.'), 'short', { name: 'Ana', role: 'user' }),
      await save('Prefers dark mode.', 'short'),
      await save('Yes, at ten.', 'short', { role: 'assistant' }),
    ];
    const asked = await cues('What time is the standup?', ids);
    // 1.00, 0.99, 0.98 and 0.97 fused; the two short messages keep their share, the long one and the short fact all.
    expect(shortMessageShare(19)).toBeCloseTo((19 / SHORT_MESSAGE_BYTES) ** 0.25, 10);
    expect(asked.shortMessages.get(ids[0]!)).toBeCloseTo(shortMessageShare(19) - 1, 10);
    expect(asked.shortMessages.get(ids[3]!)).toBeCloseTo(0.97 * (shortMessageShare(12) - 1), 10);
    expect(asked.shortMessages.size).toBe(2);
    expect(asked.ranked.map((r) => r.id)).toEqual([ids[1], ids[2], ids[0], ids[3]]);
    expect(asked.ranked[2]!.score).toBeCloseTo(shortMessageShare(19), 10);
    // Bytes, not characters: a message in a script of several bytes a character keeps more.
    expect(shortMessageShare(Buffer.byteLength('会议改到十点了'))).toBeGreaterThan(shortMessageShare('会议改到十点了'.length));
  });

  it("shows the gains in a hybrid hit's explain, and leaves lexical search and other questions alone", async () => {
    const ids = [
      await save('We moved the office to the old bakery.', 'office'),
      await save('The office move happened last March.', 'office', { name: 'Ravi', role: 'user' }),
    ];
    const embedded = sql<{ n: number }>`select count(*)::int as n from memory_embeddings where memory_id = any(${ids}::uuid[])`;
    await eventually(async () => (await query(stack.orm.em.fork(), embedded))[0]!.n === ids.length, 60_000);
    type Hit = { id: string; score: number; explain: { time_answer?: number; speaker_named?: number; short_message?: number; fused?: number } };
    const search = async (q: string, mode: string) =>
      (
        await stack.api.post('/api/memories/search', {
          token: a.token,
          body: { query: q, mode, namespace: 'office', k: 5, explain: true, resolve_time: false },
        })
      ).body.hits as Hit[];
    const hybrid = await search('when did Ravi move the office?', 'hybrid');
    const [bakery, march] = ids.map((id) => hybrid.find((h) => h.id === id)!) as [Hit, Hit];
    expect(march.explain.time_answer).toBe(TIME_ANSWER_GAIN);
    expect(march.explain.speaker_named).toBeGreaterThan(0);
    // A message of 36 bytes keeps its share of all it scored.
    const share = shortMessageShare(Buffer.byteLength('The office move happened last March.'));
    expect(march.explain.short_message).toBeCloseTo((march.score / share) * (share - 1), 10);
    expect(march.explain.fused).toBe(march.score);
    expect(bakery.explain.time_answer).toBeUndefined();
    expect(bakery.explain.speaker_named).toBeUndefined();
    expect(bakery.explain.short_message).toBeUndefined();
    const where = await search('where did we move the office to?', 'hybrid');
    expect(where.every((h) => h.explain.time_answer === undefined && h.explain.speaker_named === undefined)).toBe(true);
    const lexical = await search('when did Ravi move the office?', 'lexical');
    expect(lexical.every((h) => h.explain.time_answer === undefined && h.explain.speaker_named === undefined)).toBe(true);
    expect(lexical.every((h) => h.explain.short_message === undefined)).toBe(true);
  });
});
