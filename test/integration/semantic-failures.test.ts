import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { curatorWorkflowId } from '../../domain/store/curate.ts';
import type { Embedder } from '../../domain/store/embedder.ts';
import { embedMemories, embedPage } from '../../domain/embeddings/store.ts';
import { createOpenAiEmbedder } from '../../infra/embeddings/openai.ts';
import { queryVectorsServed } from '../../infra/metrics.ts';
import { backlogQuery } from '../../workflows/memory-curator.ts';
import { LlmServer } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// An embedding provider behind the OpenAI protocol that is down, slow or answers garbage: saves and lexical
// search go on, semantic and hybrid answer 503 embeddings_unavailable, and the backlog catches up once the
// provider is back.
const provider = new LlmServer();
let stack: Stack;
let a: SignedUp;
beforeAll(async () => {
  await provider.start();
  stack = await startStack({
    env: {
      WRITE_RATE_LIMIT_PER_MINUTE: '0',
      ...provider.embeddingEnv(),
    },
  });
  a = await signUp(stack.api);
});
afterAll(async () => {
  await stack?.close();
  await provider.close();
});
beforeEach(() => provider.reset());

const search = (body: Record<string, unknown>) => stack.api.post('/api/memories/search', { token: a.token, body });
const status = async () => (await stack.api.get('/api/memories/embeddings', { token: a.token })).body;

describe('an embedding provider that fails', () => {
  it('never fails a save or a lexical search, answers 503 for semantic and hybrid, and catches up when it returns', async () => {
    provider.down('embeddings', true);
    const saved = await stack.api.post('/api/memories', {
      token: a.token,
      body: { content: 'The quarterly report is due on the first Friday of April.' },
    });
    expect(saved.status).toBe(201);
    expect((await search({ query: 'quarterly report' })).body.hits.map((h: { id: string }) => h.id)).toEqual([saved.body.id]);
    for (const mode of ['semantic', 'hybrid']) {
      const res = await search({ query: 'quarterly report', mode });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('embeddings_unavailable');
      const bulk = await stack.api.post('/api/memories/search/bulk', { token: a.token, body: { queries: ['quarterly report'], mode } });
      expect(bulk.status).toBe(503);
    }
    // The curator has tried and is waiting to try again.
    await eventually(() => Promise.resolve(provider.calls.some((c) => c.embeddings)));
    expect(await status()).toMatchObject({ model: 'embed-test', total: 1, embedded: 0, pending: 1 });

    provider.down('embeddings', false);
    await eventually(async () => (await status()).embedded === 1, 30_000);
    const found = await search({ query: 'quarterly report', mode: 'semantic', k: 1 });
    expect(found.status).toBe(200);
    expect(found.body.hits[0]).toMatchObject({ id: saved.body.id, found_by: ['semantic'] });
  });

  it('leaves a text the provider refuses without a vector, embeds the rest of its batch, and does not retry it', async () => {
    const user = await signUp(stack.api);
    provider.limitEmbeddingInput(30);
    // Saved together, so that the relay's drain spacing usually hands both to the curator in one signal and one
    // batch (the refused text is then split out of it); in separate batches the outcome is the same.
    const [long, short] = await Promise.all([
      stack.api.post('/api/memories', { token: user.token, body: { content: 'The incident review notes run long: '.repeat(10) } }),
      stack.api.post('/api/memories', { token: user.token, body: { content: 'Backups run nightly at two.' } }),
    ]);
    expect([long.status, short.status]).toEqual([201, 201]);
    const curator = stack.temporal.workflow.getHandle(curatorWorkflowId(user.org.id));
    await eventually(async () => {
      const totals = (await curator.query(backlogQuery).catch(() => null))?.totals;
      return totals?.refused === 1 && totals.embedded === 1;
    }, 30_000);
    const backlog = await curator.query(backlogQuery);
    expect(backlog).toMatchObject({ pending: 0, totals: { embedded: 1, refused: 1 } });
    expect((await stack.api.get('/api/memories/embeddings', { token: user.token })).body).toMatchObject({
      total: 2,
      embedded: 1,
      pending: 1,
    });
    const refusals = provider.calls.filter((c) => c.status === 400).length;
    // Still found by its words.
    expect(
      (await stack.api.post('/api/memories/search', { token: user.token, body: { query: 'incident review' } })).body.hits.map(
        (h: { id: string }) => h.id,
      ),
    ).toEqual([long.body.id]);

    // Another save goes through the curator: by the time it is embedded, the curator has run again, and it
    // has not sent the refused text once more.
    const third = await stack.api.post('/api/memories', { token: user.token, body: { content: 'Standups move to Thursdays.' } });
    await eventually(async () => (await stack.api.get('/api/memories/embeddings', { token: user.token })).body.embedded === 2, 30_000);
    expect(provider.calls.filter((c) => c.status === 400)).toHaveLength(refusals);

    // One batch holding both, as the curator's activity runs it: the refused request is split until the
    // refused text stands alone, and the other text of the batch is embedded.
    await stack.orm.em.fork().getConnection().execute(`delete from memory_embeddings where memory_id = ?`, [third.body.id]);
    provider.calls.length = 0;
    const embedder = createOpenAiEmbedder({
      baseURL: `${provider.url}/v1`,
      apiKey: 'sk-embeddings',
      model: 'embed-test',
      timeoutMs: 1000,
      maxRetries: 0,
    });
    const outcome = await embedMemories(stack.orm.em.fork(), embedder, user.org.id, [long.body.id, third.body.id]);
    expect(outcome).toMatchObject({ embedded: 1, refused: 1 });
    const calls = provider.calls.map((c) => `${c.embeddings!.input.length} texts: ${c.status}`);
    expect(calls[0]).toBe('2 texts: 400');
    expect(calls.slice(1).sort()).toEqual(['1 texts: 200', '1 texts: 400']);
  });

  it('embeds a backfill page a chunk at a time, writing each chunk while the next is embedded', async () => {
    const user = await signUp(stack.api);
    provider.limitEmbeddingInput(30);
    // 150 memories, the 100th too long for the provider: it falls in the page's second chunk of 64.
    const contents = Array.from({ length: 150 }, (_, i) =>
      i === 99 ? 'The incident review notes run long: '.repeat(10) : `Backup job ${i} runs nightly.`,
    );
    const ids: string[] = [];
    for (const content of contents) ids.push((await stack.api.post('/api/memories', { token: user.token, body: { content } })).body.id);
    await eventually(async () => (await stack.api.get('/api/memories/embeddings', { token: user.token })).body.embedded === 149, 30_000);
    await stack.orm.em.fork().getConnection().execute(`delete from memory_embeddings where org_id = ?`, [user.org.id]);
    provider.calls.length = 0;

    const provided = createOpenAiEmbedder({
      baseURL: `${provider.url}/v1`,
      apiKey: 'sk-embeddings',
      model: 'embed-test',
      timeoutMs: 1000,
      maxRetries: 0,
    });
    // Every text is given to the model as the org's, so that a model shared by the orgs takes it in the org's turn.
    const owners = new Set<string | undefined>();
    const embedder: Embedder = {
      ...provided,
      embedDocuments: (texts, orgId) => (owners.add(orgId), provided.embedDocuments(texts, orgId)),
    };
    const page = await embedPage(stack.orm.em.fork(), embedder, user.org.id, null, 256);
    expect(page).toMatchObject({ outcome: { embedded: 149, refused: 1, reused: 0, current: 0 }, next: null });
    expect([...owners]).toEqual([user.org.id]);
    const accepted = provider.calls.filter((c) => c.status === 200).map((c) => c.embeddings!.input.length);
    expect(Math.max(...accepted)).toBe(64);
    expect(accepted.reduce((sum, n) => sum + n, 0)).toBe(149);
    const stored = await stack.orm.em
      .fork()
      .getConnection()
      .execute<{ memory_id: string }[]>(`select memory_id from memory_embeddings where org_id = ?`, [user.org.id]);
    expect(stored.map((r) => r.memory_id).sort()).toEqual(ids.filter((_, i) => i !== 99).sort());
  });

  it('walks a backfill past the memories whose vectors are current, a bounded number per page', async () => {
    const user = await signUp(stack.api);
    for (let i = 0; i < 12; i++)
      await stack.api.post('/api/memories', { token: user.token, body: { content: `Standup note ${i}: the build is green.` } });
    await eventually(async () => (await stack.api.get('/api/memories/embeddings', { token: user.token })).body.embedded === 12, 30_000);
    const db = stack.orm.em.fork().getConnection();
    const order = (
      await db.execute<{ id: string }[]>(`select id from memories where org_id = ? order by created_at, id`, [user.org.id])
    ).map((r) => r.id);
    // Three memories lost their vectors; a fourth has one of a text it no longer holds.
    await db.execute(`delete from memory_embeddings where memory_id in (?, ?, ?)`, [order[2], order[7], order[8]]);
    await db.execute(`update memory_embeddings set content_hash = 'stale' where memory_id = ?`, [order[10]]);

    const embedder = createOpenAiEmbedder({
      baseURL: `${provider.url}/v1`,
      apiKey: 'sk-embeddings',
      model: 'embed-test',
      timeoutMs: 1000,
      maxRetries: 0,
    });
    const cursorAt = (i: number) => expect.stringMatching(new RegExp(`\\|${order[i]}$`));
    // Five examined a page, at most two embedded.
    const first = await embedPage(stack.orm.em.fork(), embedder, user.org.id, null, 2, 5);
    expect(first).toEqual({ outcome: { embedded: 1, reused: 0, current: 4, refused: 0 }, next: cursorAt(4) });
    // Two to embed fill the page, which stops at the second of them.
    const second = await embedPage(stack.orm.em.fork(), embedder, user.org.id, first.next, 2, 5);
    expect(second).toEqual({ outcome: { embedded: 2, reused: 0, current: 2, refused: 0 }, next: cursorAt(8) });
    const third = await embedPage(stack.orm.em.fork(), embedder, user.org.id, second.next, 2, 5);
    expect(third).toEqual({ outcome: { embedded: 1, reused: 0, current: 2, refused: 0 }, next: null });
    const current = await db.execute<{ n: number }[]>(
      `select count(*)::int as n from memory_embeddings e join memories m on m.id = e.memory_id
        where e.org_id = ? and e.content_hash = md5(m.content)`,
      [user.org.id],
    );
    expect(current[0]!.n).toBe(12);
  });

  it('answers 503 when the provider answers garbage or too slowly', async () => {
    provider.respondEmbeddings((call) => call.embeddings!.input.map(() => [Number.NaN, 1, 2]));
    expect((await search({ query: 'report', mode: 'semantic' })).body.error).toBe('embeddings_unavailable');
    provider.reset();
    provider.slow('embeddings', 2000);
    const slow = await search({ query: 'report', mode: 'hybrid' });
    expect(slow.status).toBe(503);
    expect(slow.body.error).toBe('embeddings_unavailable');
    provider.reset();
    expect((await search({ query: 'report', mode: 'hybrid' })).status).toBe(200);
  });

  it("holds no search slot while a bulk search's questions are embedded: another org's search answers first", async () => {
    const [slowOrg, other] = [await signUp(stack.api), await signUp(stack.api)];
    await stack.api.post('/api/memories', { token: other.token, body: { content: 'The pager rotates every Monday.' } });
    // The stack's pool gives one search slot; the provider takes most of its deadline for the question.
    provider.slow('embeddings', 800);
    const order: string[] = [];
    const bulk = stack.api
      .post('/api/memories/search/bulk', { token: slowOrg.token, body: { queries: ['who holds the pager'], mode: 'hybrid' } })
      .then((res) => (order.push('bulk'), res));
    await eventually(() => Promise.resolve(provider.calls.some((c) => c.embeddings?.input.includes('who holds the pager'))));
    const lexical = await stack.api.post('/api/memories/search', { token: other.token, body: { query: 'pager', mode: 'lexical' } });
    order.push('lexical');
    expect(lexical.status).toBe(200);
    expect((await bulk).status).toBe(200);
    expect(order).toEqual(['lexical', 'bulk']);
  });

  it('answers memories like one from stored vectors while the provider is down, and 409 before it has a vector', async () => {
    const user = await signUp(stack.api);
    const put = async (content: string) =>
      (await stack.api.post('/api/memories', { token: user.token, body: { content } })).body.id as string;
    const similar = (id: string) => stack.api.get(`/api/memories/${id}/similar`, { token: user.token });
    const first = await put('The staging database is refreshed from production every Sunday night.');
    const second = await put('Every Sunday night staging gets a fresh copy of the production data.');
    await eventually(async () => (await stack.api.get('/api/memories/embeddings', { token: user.token })).body.embedded === 2, 30_000);

    provider.down('embeddings', true);
    const res = await similar(first);
    expect(res.status).toBe(200);
    expect(res.body.hits.map((h: { id: string }) => h.id)).toEqual([second]);
    // A search needs the query's vector, which the provider cannot give now.
    expect(
      (await stack.api.post('/api/memories/search', { token: user.token, body: { query: 'staging refresh', mode: 'semantic' } })).status,
    ).toBe(503);
    const pending = await similar(await put('The staging database is refreshed on Sundays.'));
    expect(pending.status).toBe(409);
    expect(pending.body).toMatchObject({ error: 'embedding_pending' });
  });

  it('answers a question asked again from its vector, in the org that asked it only, even while the provider is down', async () => {
    const [one, two] = [await signUp(stack.api), await signUp(stack.api)];
    const saved = await stack.api.post('/api/memories', {
      token: one.token,
      body: { content: 'Deploys to production happen on Tuesdays.' },
    });
    await eventually(async () => (await stack.api.get('/api/memories/embeddings', { token: one.token })).body.embedded === 1, 30_000);
    const ask = (user: SignedUp, query: string, mode = 'semantic') =>
      stack.api.post('/api/memories/search', { token: user.token, body: { query, mode } });
    const askMany = (user: SignedUp, queries: string[]) =>
      stack.api.post('/api/memories/search/bulk', { token: user.token, body: { queries, mode: 'hybrid' } });
    const question = 'when do we ship releases';
    // What the provider was asked to embed for these searches (the curator's calls for other tests' saves aside).
    const embedded = () =>
      provider.calls.flatMap((c) => c.embeddings?.input ?? []).filter((text) => /releases|billing|deploy days/.test(text));
    const served = async () => Object.fromEntries((await queryVectorsServed.get()).values.map((v) => [v.labels.source, v.value]));
    const before = await served();

    const first = await ask(one, question);
    expect(first.body.hits.map((h: { id: string }) => h.id)).toEqual([saved.body.id]);
    expect((await ask(one, question, 'hybrid')).status).toBe(200);
    // A bulk search embeds the texts it has not seen, each once.
    expect((await askMany(one, [question, 'who owns billing', 'who owns billing'])).status).toBe(200);
    expect(embedded()).toEqual([question, 'who owns billing']);
    const after = await served();
    expect([after.model! - (before.model ?? 0), after.cache! - (before.cache ?? 0)]).toEqual([2, 3]);

    provider.down('embeddings', true);
    const again = await ask(one, question);
    expect(again.status).toBe(200);
    expect(again.body.hits).toEqual(first.body.hits);
    expect((await askMany(one, ['who owns billing', question])).status).toBe(200);
    // Another org asking the same words gets no vector of the first org's: it waits for the model, which is down.
    expect((await ask(two, question)).body.error).toBe('embeddings_unavailable');
    expect((await ask(one, 'which are the deploy days')).body.error).toBe('embeddings_unavailable');
    provider.down('embeddings', false);
    expect((await ask(two, question)).status).toBe(200);
    expect(embedded()).toEqual([question, 'who owns billing', question, 'which are the deploy days', question]);
  });
});

describe('embeddings turned off', () => {
  it('keeps lexical search and answers 503 for semantic search', async () => {
    const off = await startStack({ env: { EMBEDDING_PROVIDER: 'none' } });
    try {
      const user = await signUp(off.api);
      await off.api.post('/api/memories', { token: user.token, body: { content: 'Standup is at ten.' } });
      expect((await off.api.post('/api/memories/search', { token: user.token, body: { query: 'standup' } })).body.hits).toHaveLength(1);
      const res = await off.api.post('/api/memories/search', { token: user.token, body: { query: 'standup', mode: 'semantic' } });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ error: 'embeddings_unavailable' });
      expect((await off.api.get('/api/memories/embeddings', { token: user.token })).body).toEqual({
        model: null,
        total: 1,
        embedded: 0,
        pending: 0,
        index: 'shared',
      });
      const [memory] = (await off.api.post('/api/memories/search', { token: user.token, body: { query: 'standup' } })).body.hits;
      const similar = await off.api.get(`/api/memories/${memory.id}/similar`, { token: user.token });
      expect(similar.status).toBe(503);
      expect(similar.body).toMatchObject({ error: 'embeddings_unavailable' });
    } finally {
      await off.close();
    }
  });
});
