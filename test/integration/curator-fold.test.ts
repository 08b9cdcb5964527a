import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, sql } from '../../domain/sql.ts';
import { Bm25Reference } from '../support/bm25-reference.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// The org's curator folds what saves stage into postings blocks on its own, and search answers the same
// before and after (lexical-blocks.test.ts covers the fold itself, its races and its tombstones).
let stack: Stack;
let a: SignedUp;
const reference = new Bm25Reference();

beforeAll(async () => {
  stack = await startStack({ env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
});
afterAll(async () => stack?.close());

const count = async (table: string) =>
  (await query(stack.orm.em.fork(), sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where org_id = ${a.org.id}`))[0]!
    .n;

describe("the curator's folding", () => {
  it('folds every saved memory into blocks, and search ranks the same as the oracle throughout', async () => {
    const words = ['orbit', 'rocket', 'launch', 'window', 'payload', 'fairing', 'stage', 'engine', 'nozzle', 'thrust'];
    for (let i = 0; i < 60; i++) {
      const content = `${words[i % 10]} ${words[(i * 3) % 10]} ${words[(i * 7) % 10]} note ${i}`;
      const res = await stack.api.post('/api/memories', { token: a.token, body: { content } });
      reference.add(res.body.id, res.body.content);
    }
    await eventually(async () => (await count('lexical_staged')) === 0 && (await count('lexical_docs')) === 60, 30_000);
    for (const q of ['rocket launch', 'nozzle thrust engine', 'payload']) {
      const hits = (await stack.api.post('/api/memories/search', { token: a.token, body: { query: q, k: 15 } })).body.hits as {
        id: string;
        score: number;
      }[];
      const expected = reference.search(q, 15);
      expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id));
    }
  });
});
