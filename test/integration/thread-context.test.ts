import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withContext } from '../../domain/store/thread-context.ts';
import { compileFilters } from '../../domain/store/filters.ts';
import { CONTEXT_SHARES, withThreadContext } from '../../domain/search/lexical-context.ts';
import { query, sql } from '../../domain/sql.ts';
import { llmEnv } from '../support/llm-env.ts';
import { LlmServer, type LlmCall } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';
import { parseVector } from '../../domain/store/vectors.ts';

// Thread context in semantic search, against the real stack (the bundled model, PostgreSQL with pgvector, the
// org's curator): a chunk of a thread is searched by its text mixed with the two chunks before it.
const llm = new LlmServer();
let stack: Stack;
let a: SignedUp;

beforeAll(async () => {
  await llm.start();
  stack = await startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...llmEnv(llm) } });
  a = await signUp(stack.api);
  // Consolidation's merge is a paid feature.
  await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${a.org.id}`);
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await llm.close();
});

const save = async (content: string, metadata?: Record<string, unknown>, namespace = 'chat'): Promise<string> => {
  const res = await stack.api.post('/api/memories', { token: a.token, body: { content, namespace, ...(metadata ? { metadata } : {}) } });
  expect(res.status).toBe(201);
  return res.body.id;
};
const turn = (thread: string, index: number) => ({ parent_ref: thread, chunk_index: index });

interface Stored {
  searched: Float32Array;
  text: Float32Array | null;
}
async function vectors(ids: string[]): Promise<Map<string, Stored>> {
  const rows = await query(
    stack.orm.em.fork(),
    sql<{
      memory_id: string;
      embedding: string;
      text_embedding: string | null;
    }>`select memory_id, embedding::text as embedding, text_embedding::text as text_embedding
      from memory_embeddings where org_id = ${a.org.id} and memory_id = any(${ids}::uuid[])`,
  );
  return new Map(
    rows.map((r) => [
      r.memory_id,
      { searched: parseVector(r.embedding), text: r.text_embedding === null ? null : parseVector(r.text_embedding) },
    ]),
  );
}
// Waits until `id`'s searched vector is its text's vector mixed with the texts of `before`, and returns them.
async function mixedWith(id: string, before: string[]): Promise<Map<string, Stored>> {
  return eventually(async () => {
    const stored = await vectors([id, ...before]);
    const own = stored.get(id);
    if (!own?.text || before.some((b) => !stored.get(b)?.text)) return false;
    const expected = withContext(
      own.text,
      before.map((b) => stored.get(b)!.text!),
    );
    return near(own.searched, expected) && stored;
  }, 60_000);
}
const near = (x: Float32Array, y: Float32Array) => x.every((v, i) => Math.abs(v - y[i]!) < 1e-5);

describe('thread context in semantic search', () => {
  it('searches a turn with the two before it, so an answer is found by its question', async () => {
    const question = await save('Jordan: What did you name the puppy you adopted in March?', turn('t1', 0));
    const answer = await save('Riley: Biscuit! He already knows how to sit.', turn('t1', 1));
    // The same text outside any thread is searched by its words alone.
    const alone = await save('Riley: Biscuit! He already knows how to sit.');
    const stored = await mixedWith(answer, [question]);
    // The copy may come in a later batch than the turn: the search below compares the two once both have a vector.
    await eventually(async () => (await vectors([alone])).has(alone), 60_000);
    // The first turn has no context: its searched vector is its text's.
    expect(near(stored.get(question)!.searched, stored.get(question)!.text!)).toBe(true);
    const res = await stack.api.post('/api/memories/search', {
      token: a.token,
      body: { query: "what is Riley's dog called", mode: 'semantic', k: 5 },
    });
    const score = (id: string) => res.body.hits.find((h: { id: string }) => h.id === id)?.score as number;
    expect(score(answer)).toBeGreaterThan(score(alone));
    // The copy outside the thread reused the turn's text vector: no context, and no second run of the model.
    const copy = (await vectors([alone])).get(alone)!;
    expect(copy.text).toBeNull();
    expect(near(copy.searched, stored.get(answer)!.text!)).toBe(true);
  });

  it('mixes a turn saved before the one it follows again once that one arrives, and again when it is deleted', async () => {
    const first = await save('Sam: I am training for the Berlin marathon in September.', turn('t2', 0));
    const third = await save('Sam: Mostly long runs by the river before work.', turn('t2', 2));
    await mixedWith(third, [first]);
    const second = await save('Alex: How do you fit the training into your week?', turn('t2', 1));
    await mixedWith(third, [second, first]);
    expect((await stack.api.delete(`/api/memories/${second}`, { token: a.token })).status).toBe(204);
    await mixedWith(third, [first]);
  });

  it('follows a chunk that moves within or out of its thread', async () => {
    const one = await save('Kim: The quarterly report is due on Friday.', turn('t3', 0));
    const two = await save('Lee: I will send the sales figures tomorrow.', turn('t3', 1));
    const three = await save('Kim: Great, then I can draft the summary.', turn('t3', 2));
    await mixedWith(three, [two, one]);
    // `three` moves to the front: it loses its context, and the others take it as theirs.
    expect((await stack.api.patch(`/api/memories/${three}`, { token: a.token, body: { metadata: { chunk_index: -1 } } })).status).toBe(200);
    await mixedWith(one, [three]);
    await mixedWith(two, [one, three]);
    await mixedWith(three, []);
    // Out of the thread, `two` is searched by its text alone again.
    const before = (await vectors([two])).get(two)!;
    expect((await stack.api.patch(`/api/memories/${two}`, { token: a.token, body: { metadata: { parent_ref: null } } })).status).toBe(200);
    await eventually(async () => {
      const stored = (await vectors([two])).get(two)!;
      return stored.text === null && near(stored.searched, before.text!);
    }, 60_000);
  });

  it('leaves a chunk that consolidation merged away out of the context of the chunks after it', async () => {
    const first = await save('Pat: We moved the standup to 10am.', turn('t4', 0), 'merge');
    const merged = await save(
      'Quinn: The deploy pipeline for billing runs on GitHub Actions and takes twelve minutes.',
      turn('t4', 1),
      'merge',
    );
    const third = await save('Pat: Good, that is faster than before.', turn('t4', 2), 'merge');
    await save('Quinn: The deploy pipeline for billing runs on GitHub Actions, and takes twelve minutes!', undefined, 'merge');
    await mixedWith(third, [merged, first]);
    await stack.api.post('/api/consolidate', { token: a.token, body: { action: 'detect', namespace: 'merge' } });
    const proposals = (await stack.api.get('/api/consolidate?status=pending', { token: a.token })).body.proposals as {
      id: string;
      memory_a_id: string;
      memory_b_id: string;
    }[];
    const duplicate = proposals.find((p) => [p.memory_a_id, p.memory_b_id].includes(merged))!;
    expect(
      (await stack.api.post('/api/consolidate', { token: a.token, body: { action: 'review', id: duplicate.id, decision: 'approved' } }))
        .status,
    ).toBe(200);
    llm.respond((call: LlmCall) =>
      call.tool?.name === 'merge_memories'
        ? { merged: 'Quinn: billing deploys run on GitHub Actions in twelve minutes.', had_conflict: false }
        : undefined,
    );
    expect((await stack.api.post('/api/consolidate', { token: a.token, body: { action: 'merge', id: duplicate.id } })).status).toBe(200);
    await mixedWith(third, [first]);
  });

  it('leaves the chunks of an erased project out of the context of the same thread in another project', async () => {
    const gone = await save('Ravi: Which office should the offsite be in?', turn('t5', 0), 'offsite-drafts');
    const kept = await save('Sia: Lisbon, the team voted for it.', turn('t5', 1), 'offsite');
    await mixedWith(kept, [gone]);
    const projects = (await stack.api.get('/api/projects', { token: a.token })).body.projects as { id: string; name: string }[];
    const drafts = projects.find((p) => p.name === 'offsite-drafts')!;
    expect((await stack.api.delete(`/api/projects/${drafts.id}`, { token: a.token })).status).toBe(204);
    await mixedWith(kept, []);
  });
});

describe("thread context in hybrid search's lexical list", () => {
  it('gives the chunks after a listed memory a share of its score, only those that pass the filter', async () => {
    const question = await save('Jordan: Did you adopt the shelter dog in March?', turn('l1', 0));
    const answer = await save('Riley: Biscuit! He already knows how to sit.', turn('l1', 1), 'elsewhere');
    const next = await save('Riley: And he sleeps all day long.', turn('l1', 2));
    const later = await save('Jordan: Lovely, send a photo.', turn('l1', 3));
    const chat = await compileFilters(stack.orm.em.fork(), a.org.id, { namespace: 'chat' });
    const everywhere = await compileFilters(stack.orm.em.fork(), a.org.id, {});
    const list = [{ id: question, score: 10 }];
    // The two chunks after the question gain 0.2 and 0.1 of its score; the third gains nothing.
    expect((await withThreadContext(stack.orm.em.fork(), a.org.id, list, 10, everywhere)).ranked).toEqual([
      { id: question, score: 10 },
      { id: answer, score: 10 * CONTEXT_SHARES[0] },
      { id: next, score: 10 * CONTEXT_SHARES[1] },
    ]);
    // In the question's project, the answer (in another project) is no hit, and still the chunk after the question.
    expect((await withThreadContext(stack.orm.em.fork(), a.org.id, list, 10, chat)).ranked).toEqual([
      { id: question, score: 10 },
      { id: next, score: 10 * CONTEXT_SHARES[1] },
    ]);
    // A listed chunk keeps its own score plus its share, and the list is cut to n.
    const both = (
      await withThreadContext(
        stack.orm.em.fork(),
        a.org.id,
        [
          { id: question, score: 10 },
          { id: next, score: 5 },
        ],
        2,
        everywhere,
      )
    ).ranked;
    expect(both).toEqual([
      { id: question, score: 10 },
      { id: next, score: 5 + 10 * CONTEXT_SHARES[1] },
    ]);
    expect(both.map((r) => r.id)).not.toContain(later);
  });

  it('lets hybrid search find by its words a turn that answers the turn before it, and leaves lexical search as it was', async () => {
    const question = await save('Jordan: Which volcano did you hike on Tuesday?', turn('l2', 0), 'trips');
    const answer = await save('Riley: Etna! The crater was steaming the whole time.', turn('l2', 1), 'trips');
    await save('Riley: The weather in Oslo was grey all week.', undefined, 'trips');
    await eventually(async () => (await vectors([question, answer])).size === 2, 60_000);
    const search = (mode: string) =>
      stack.api.post('/api/memories/search', { token: a.token, body: { query: 'volcano hike', mode, namespace: 'trips', k: 5 } });
    const hybrid = (await search('hybrid')).body.hits as { id: string; found_by: string[] }[];
    expect(hybrid.find((h) => h.id === answer)?.found_by).toContain('lexical');
    const lexical = (await search('lexical')).body.hits as { id: string }[];
    expect(lexical.map((h) => h.id)).toEqual([question]);
  });
});
