import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCandidates } from '../../domain/consolidation/detect.ts';
import { compileFilters, memoryPasses } from '../../domain/store/filters.ts';
import { chunksAfterNamed } from '../../domain/store/thread-context.ts';
import { EF_SEARCH, efSearch, semanticCandidates } from '../../domain/search/semantic.ts';
import { query, queryOne, sql } from '../../domain/sql.ts';
import { curatorWorkflowId } from '../../domain/store/curate.ts';
import { pageWithoutVectors, vectorsWrite } from '../../domain/embeddings/store.ts';
import { backlogQuery } from '../../workflows/memory-curator.ts';
import { llmEnv } from '../support/llm-env.ts';
import { LlmServer } from '../support/llm-server.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';
import { vectorLiteral } from '../../domain/store/vectors.ts';

// Semantic and hybrid recall against the real stack: the bundled model in the API and the worker, vectors in
// PostgreSQL with pgvector, and each org's curator workflow embedding what is saved.
const llm = new LlmServer();
let stack: Stack;
let a: SignedUp;
let b: SignedUp;
const ids: Record<string, string> = {};

const MEMORIES: Record<string, { content: string; namespace?: string; tags?: string[]; metadata?: Record<string, unknown> }> = {
  deploys: { content: 'Deploys to production happen on Tuesdays after the change review.', namespace: 'ops', tags: ['process'] },
  diet: { content: 'Dana is vegetarian and allergic to peanuts; book restaurants accordingly.', namespace: 'people', tags: ['personal'] },
  oncall: {
    content: 'The pager rotation switches owners every Monday at 9am Berlin time.',
    namespace: 'ops',
    tags: ['process'],
    metadata: { team: 'sre' },
  },
  db: {
    content: 'The billing service keeps invoices in PostgreSQL 16 with nightly backups to cold storage.',
    namespace: 'ops',
    tags: ['infra'],
  },
  cat: { content: "Ivan's cat is called Pixel and sleeps on the office printer.", namespace: 'people', tags: ['personal'] },
  flights: { content: 'Omar prefers aisle seats and morning flights when travelling for work.', namespace: 'people', tags: ['travel'] },
};

const save = (who: SignedUp, body: unknown) => stack.api.post('/api/memories', { token: who.token, body });
const search = (who: SignedUp, body: Record<string, unknown>) => stack.api.post('/api/memories/search', { token: who.token, body });
const status = async (who: SignedUp) => (await stack.api.get('/api/memories/embeddings', { token: who.token })).body;
const allEmbedded = (who: SignedUp) =>
  eventually(async () => {
    const s = await status(who);
    return s.total > 0 && s.embedded === s.total && s;
  }, 60_000);

beforeAll(async () => {
  await llm.start();
  stack = await startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0', ...llmEnv(llm) } });
  [a, b] = [await signUp(stack.api), await signUp(stack.api)];
  for (const [key, memory] of Object.entries(MEMORIES)) ids[key] = (await save(a, memory)).body.id;
  // Another org holds the very same sentence: it must never surface in a's results.
  ids.foreignDeploys = (await save(b, { content: MEMORIES.deploys!.content })).body.id;
  await allEmbedded(a);
  await allEmbedded(b);
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await llm.close();
});

describe('semantic and hybrid search', () => {
  it('finds a memory asked for in other words, which lexical search misses', async () => {
    const question = 'what day are releases shipped';
    expect((await search(a, { query: question })).body.hits).toEqual([]);
    const semantic = await search(a, { query: question, mode: 'semantic', k: 3 });
    expect(semantic.status).toBe(200);
    expect(semantic.body.hits[0]).toMatchObject({ id: ids.deploys, namespace: 'ops', found_by: ['semantic'] });
    expect(semantic.body.hits[0].score).toBeGreaterThan(semantic.body.hits[1].score);
    const hybrid = await search(a, { query: question, mode: 'hybrid', k: 3 });
    expect(hybrid.body.hits[0]).toMatchObject({ id: ids.deploys, found_by: ['semantic'] });
    expect((await search(a, { query: 'what can Dana not eat', mode: 'semantic', k: 1 })).body.hits[0].id).toBe(ids.diet);
  });

  it('searches by words and meaning for an MCP agent that names no mode', async () => {
    const client = new Client({ name: 'semantic-search-tests', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', stack.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${a.token}` } },
      }),
    );
    const asked = await client.callTool({ name: 'search_memories', arguments: { query: 'what day are releases shipped', k: 3 } });
    expect((asked.structuredContent as { hits: unknown[] }).hits[0]).toMatchObject({ id: ids.deploys, relevance: expect.any(Number) });
    expect(asked._meta).toEqual({ mode: 'hybrid' });
    const words = await client.callTool({
      name: 'search_memories',
      arguments: { query: 'what day are releases shipped', mode: 'lexical' },
    });
    expect(words.structuredContent).toEqual({ hits: [] });
    await client.close();
  });

  it('marks the lists that found each hit in hybrid mode', async () => {
    const res = await search(a, { query: 'Pixel the cat', mode: 'hybrid', k: 6 });
    expect(res.body.hits[0]).toMatchObject({ id: ids.cat, found_by: ['lexical', 'semantic'] });
    expect(res.body.hits.slice(1).every((h: { found_by: string[] }) => h.found_by.join() === 'semantic')).toBe(true);
  });

  it("leaves the words that only make a question out of hybrid's lexical list", async () => {
    const question = 'when does the cat sleep';
    // Lexical mode keeps them: "when" alone matches the memory about flights.
    expect((await search(a, { query: question, k: 6 })).body.hits.map((h: { id: string }) => h.id)).toContain(ids.flights);
    const hybrid = (await search(a, { query: question, mode: 'hybrid', k: 6 })).body.hits as { id: string; found_by: string[] }[];
    expect(hybrid[0]).toMatchObject({ id: ids.cat, found_by: ['lexical', 'semantic'] });
    expect(hybrid.filter((h) => h.found_by.includes('lexical')).map((h) => h.id)).toEqual([ids.cat]);
  });

  it('applies every filter in every mode, and returns k rows when k match', async () => {
    for (const mode of ['semantic', 'hybrid']) {
      const inPeople = await search(a, { query: 'release schedule', mode, k: 10, namespace: 'people' });
      expect(inPeople.body.hits.map((h: { id: string }) => h.id).sort()).toEqual([ids.diet, ids.cat, ids.flights].sort());
      const tagged = await search(a, { query: 'release schedule', mode, k: 10, tags: ['process'] });
      expect(tagged.body.hits.map((h: { id: string }) => h.id).sort()).toEqual([ids.deploys, ids.oncall].sort());
      const byMetadata = await search(a, { query: 'release schedule', mode, k: 10, metadata_filter: { team: 'sre' } });
      expect(byMetadata.body.hits.map((h: { id: string }) => h.id)).toEqual([ids.oncall]);
      const future = await search(a, { query: 'release schedule', mode, k: 10, created_after: Date.now() + 60_000 });
      expect(future.body.hits).toEqual([]);
      expect((await search(a, { query: 'release schedule', mode, k: 10, namespace: 'nowhere' })).body.hits).toEqual([]);
    }
  });

  it("never returns another org's memories", async () => {
    const res = await search(a, { query: 'when do we ship releases', mode: 'hybrid', k: 50 });
    expect(res.body.hits.map((h: { id: string }) => h.id)).not.toContain(ids.foreignDeploys);
    const theirs = await search(b, { query: 'when do we ship releases', mode: 'semantic', k: 50 });
    expect(theirs.body.hits.map((h: { id: string }) => h.id)).toEqual([ids.foreignDeploys]);
  });

  it('searches in bulk in any mode', async () => {
    const res = await stack.api.post('/api/memories/search/bulk', {
      token: a.token,
      body: { queries: ['what day are releases shipped', 'who carries the pager'], k: 1, mode: 'hybrid' },
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { hits: { id: string }[] }) => r.hits[0]!.id)).toEqual([ids.deploys, ids.oncall]);
    // Filters, tags among them, apply to every query.
    const tagged = await stack.api.post('/api/memories/search/bulk', {
      token: a.token,
      body: { queries: ['what can Dana not eat', 'who carries the pager'], k: 10, mode: 'semantic', tags: ['personal'] },
    });
    expect(tagged.body.results.map((r: { hits: { id: string }[] }) => r.hits.map((h) => h.id).sort())).toEqual([
      [ids.diet, ids.cat].sort(),
      [ids.diet, ids.cat].sort(),
    ]);
  });

  it('rejects an unknown mode', async () => {
    const res = await search(a, { query: 'x', mode: 'psychic' });
    expect(res.status).toBe(400);
  });

  it('re-embeds an edited memory, drops the vector of a deleted one, and reuses vectors for identical text', async () => {
    const res = await stack.api.patch(`/api/memories/${ids.flights}`, {
      token: a.token,
      body: { content: 'Omar is learning to play the cello on weekends.' },
    });
    expect(res.status).toBe(200);
    await eventually(async () => {
      const hits = (await search(a, { query: 'which musical instrument does Omar practise', mode: 'semantic', k: 1 })).body.hits;
      return hits[0]?.id === ids.flights;
    });
    const copy = (await save(a, { content: MEMORIES.cat!.content })).body.id;
    await allEmbedded(a);
    const handle = stack.temporal.workflow.getHandle(curatorWorkflowId(a.org.id));
    const backlog = await handle.query(backlogQuery);
    expect(backlog.totals.reused).toBeGreaterThanOrEqual(1);
    const desc = await handle.describe();
    expect(desc.typedSearchAttributes.getAll().map((p) => p.value)).toContain(a.org.id);

    await stack.api.delete(`/api/memories/${copy}`, { token: a.token });
    const rows = await query(
      stack.orm.em.fork(),
      sql<{ n: number }>`select count(*)::int as n from memory_embeddings where memory_id = ${copy}`,
    );
    expect(rows[0]!.n).toBe(0);
  });

  it("reads the approximate candidates in the HNSW index's order (its half-precision expression)", async () => {
    // With sorts and sequential scans priced out, the planner orders by the index only if the query names the
    // index's own expression; a mismatch would leave a Sort in the plan (correct results, read the slow way).
    const em = stack.orm.em.fork();
    const compiled = await compileFilters(em, a.org.id, {});
    const plan = await em.transactional(async (tx) => {
      await query(tx, sql`select set_config('enable_sort', 'off', true), set_config('enable_seqscan', 'off', true)`);
      const statement = semanticCandidates(
        a.org.id,
        vectorLiteral(new Float32Array(384).fill(0.05)),
        'bge-small-en-v1.5-int8',
        10,
        compiled,
        'shared',
      );
      return query(tx, sql<{ 'QUERY PLAN': string }>`explain ${statement}`);
    });
    const text = plan.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toContain('memory_embeddings_shared_idx');
    expect(text).not.toContain('Sort');
  });

  it('reads each memory by its primary key in an org the statistics do not know yet', async () => {
    // Statistics gathered before an org existed estimate it at one row; a plain join then re-read all the org's
    // memories for each candidate (8 s a search in a new org of 5,882 memories beside a big one: bench/memories.ts
    // measures that case). The statements probe each row by its key instead, whatever the statistics say; so do
    // the curator's write of vectors (it hashed all the org's memories for each batch) and a backfill page (it read
    // all the org's vectors again for each memory).
    await query(stack.orm.em.fork(), sql`analyze memories, memory_embeddings, lexical_docs`);
    const c = await signUp(stack.api);
    for (let i = 0; i < 40; i++)
      expect((await save(c, { content: `Note ${i} about the quarterly plan.`, namespace: i % 2 ? 'odd' : 'even' })).status).toBe(201);
    await allEmbedded(c);
    const em = stack.orm.em.fork();
    const compiled = await compileFilters(em, c.org.id, { namespace: 'odd' });
    const q = vectorLiteral(new Float32Array(384).fill(0.05));
    const plans = await Promise.all(
      [
        semanticCandidates(c.org.id, q, 'bge-small-en-v1.5-int8', 10, compiled, 'shared'),
        semanticCandidates(c.org.id, q, 'bge-small-en-v1.5-int8', 10, compiled, 'exact'),
        sql`select d.docnum from lexical_docs d where d.org_id = ${c.org.id} and ${memoryPasses(compiled, 'd')}`,
        vectorsWrite(c.org.id, 'bge-small-en-v1.5-int8', [{ id: randomUUID(), hash: 'h', vector: q }]),
        pageWithoutVectors(
          sql`org_id = ${c.org.id} and superseded_by is null`,
          c.org.id,
          'bge-small-en-v1.5-int8',
          { created_at: new Date(), id: randomUUID() },
          256,
        ),
      ].map(async (statement) =>
        (await query(em, sql<{ 'QUERY PLAN': string }>`explain ${statement}`)).map((row) => row['QUERY PLAN']).join('\n'),
      ),
    );
    // Each candidate's memory is looked up by its own id (a subplan run per row), never joined as a whole.
    expect(plans[0]).toContain('SubPlan');
    expect(plans[0]).toMatch(/id = e\.memory_id/);
    expect(plans[1]).toContain('Nested Loop');
    expect(plans[1]).toMatch(/memory_id = m\.id/);
    expect(plans[2]).toContain('SubPlan');
    expect(plans[2]).toMatch(/id = d\.memory_id/);
    expect(plans[3]).toContain('SubPlan');
    expect(plans[3]).toMatch(/id = u\.id/);
    expect(plans[4]).toContain('SubPlan');
    expect(plans[4]).toMatch(/memory_id = x\.id/);
    // A small org searched whole reads its vectors by their key's range, and checks only the nearest.
    const whole = semanticCandidates(c.org.id, q, 'bge-small-en-v1.5-int8', 10, await compileFilters(em, c.org.id, {}), 'org');
    plans.push((await query(em, sql<{ 'QUERY PLAN': string }>`explain ${whole}`)).map((row) => row['QUERY PLAN']).join('\n'));
    expect(plans[5]).toContain('SubPlan');
    expect(plans[5]).toMatch(/id = c\.memory_id/);
    // The chunks after a hybrid search's lexical hits (its thread context) are found from each hit read by its key.
    const context = chunksAfterNamed(c.org.id, [randomUUID(), randomUUID()], compiled.where);
    plans.push((await query(em, sql<{ 'QUERY PLAN': string }>`explain ${context}`)).map((row) => row['QUERY PLAN']).join('\n'));
    expect(plans[6]).toMatch(/Function Scan on unnest named[\s\S]*\(id = named\.id\)/);
    expect(plans[6]).not.toContain('ANY');
    for (const plan of plans) expect(plan).not.toMatch(/Join Filter|Hash Join|Merge Join/);
    // And the answers are the org's own, filtered.
    const hits = (await search(c, { query: 'quarterly plan', mode: 'hybrid', namespace: 'odd', k: 50 })).body.hits;
    expect(hits).toHaveLength(20);
    expect(new Set(hits.map((h: { namespace: string }) => h.namespace))).toEqual(new Set(['odd']));
  });

  it('ranks a small org by its vectors alone, and scores its memories when the nearest were merged away', async () => {
    const d = await signUp(stack.api);
    const put = async (content: string) => (await save(d, { content })).body.id as string;
    const deploys = await put('Deploys to production happen on Tuesdays after the change review.');
    const releases = (await save(d, { content: 'We ship a new release to our customers every Tuesday.', tags: ['ship'] })).body
      .id as string;
    const cat = await put("Ivan's cat is called Pixel and sleeps on the office printer.");
    await put('The office plants are watered by an outside company on Mondays.');
    await allEmbedded(d);
    const ask = async (k: number) =>
      (await search(d, { query: 'what day are releases shipped', mode: 'semantic', k })).body.hits.map(
        (h: { id: string }) => h.id,
      ) as string[];
    const before = await ask(4);
    expect(before.slice(0, 2).sort()).toEqual([deploys, releases].sort());
    // The org's vectors alone rank as its memories scored one by one.
    const em = stack.orm.em.fork();
    const compiled = await compileFilters(em, d.org.id, {});
    const row = await queryOne(
      em,
      sql<{ v: string }>`select embedding::text as v from memory_embeddings where org_id = ${d.org.id} and memory_id = ${cat}`,
    );
    const byDistance = (rows: { id: string; distance: number | string }[]) =>
      rows.map((r) => [r.id, Number(r.distance).toFixed(6)]).sort((x, y) => Number(x[1]) - Number(y[1]));
    const whole = await query(em, semanticCandidates(d.org.id, row!.v, 'bge-small-en-v1.5-int8', 2, compiled, 'org'));
    const scored = await query(em, semanticCandidates(d.org.id, row!.v, 'bge-small-en-v1.5-int8', 4, compiled, 'exact'));
    expect(byDistance(whole)).toEqual(byDistance(scored));
    // Filtered, the nearest 2n rows are checked against the filter: what passes of them ranks as the scored ones.
    const tagged = await compileFilters(em, d.org.id, { tags: ['ship'] });
    const taggedWhole = await query(em, semanticCandidates(d.org.id, row!.v, 'bge-small-en-v1.5-int8', 2, tagged, 'org'));
    expect(taggedWhole.map((r) => r.id)).toEqual([releases]);
    expect(byDistance(taggedWhole)).toEqual(
      byDistance(await query(em, semanticCandidates(d.org.id, row!.v, 'bge-small-en-v1.5-int8', 2, tagged, 'exact'))),
    );
    // Both nearest merged away: the 2k nearest vectors of a search for one hold no memory that passes, so the
    // memories are scored, and the next one comes back.
    await query(
      em,
      sql`update memories set superseded_by = ${cat} where org_id = ${d.org.id} and id = any(${[deploys, releases]}::uuid[])`,
    );
    expect(await ask(1)).toEqual([before[2]]);
    expect(await ask(4)).toEqual(before.slice(2));
  });

  it("sets pgvector's settings in the search's own statement, so a search needs no transaction nor session settings", async () => {
    // A session that scans as pgvector would with ef_search 1 and no iterative scan yields one row through the
    // index; the statement sets its own (efSearch, iterative), so it still yields the n asked, and only for itself.
    const em = stack.orm.em.fork();
    const compiled = await compileFilters(em, a.org.id, {});
    const [rows, after] = await em.transactional(async (tx) => {
      await query(
        tx,
        sql`select set_config('hnsw.ef_search', '1', true), set_config('hnsw.iterative_scan', 'off', true),
            set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true)`,
      );
      const found = await query(
        tx,
        semanticCandidates(a.org.id, vectorLiteral(new Float32Array(384).fill(0.05)), 'bge-small-en-v1.5-int8', 5, compiled, 'shared'),
      );
      return [found, await queryOne(tx, sql<{ ef: string }>`select current_setting('hnsw.ef_search') as ef`)];
    });
    expect(rows).toHaveLength(5);
    expect(efSearch(5)).toBe(EF_SEARCH);
    // set_config's local form: inside a transaction the statement's settings last to its end, outside it (a
    // search's own statement) to the statement's.
    expect(after).toEqual({ ef: String(EF_SEARCH) });
    const fresh = await queryOne(
      stack.orm.em.fork(),
      sql<{ ef: string; scan: string }>`select current_setting('hnsw.ef_search') as ef, current_setting('hnsw.iterative_scan') as scan`,
    );
    expect(fresh).toEqual({ ef: '40', scan: 'off' });
  });

  it('backfills vectors that went missing, on request', async () => {
    await query(stack.orm.em.fork(), sql`delete from memory_embeddings where org_id = ${a.org.id}`);
    expect((await status(a)).embedded).toBe(0);
    const res = await stack.api.post('/api/memories/embeddings/backfill', { token: a.token });
    expect(res.status).toBe(202);
    const done = await allEmbedded(a);
    expect(done).toMatchObject({ model: 'bge-small-en-v1.5-int8', pending: 0 });
  });

  it('keeps the embedding status exact through every kind of write to the vectors, without counting them', async () => {
    const c = await signUp(stack.api);
    const saved: string[] = [];
    for (const content of [
      'Sprint planning is on Wednesdays.',
      'The VPN needs a hardware key.',
      'Backups rotate weekly.',
      'Sprint planning is on Wednesdays.',
    ]) {
      saved.push((await save(c, { content })).body.id);
    }
    const exact = async () => {
      const rows = await query(
        stack.orm.em.fork(),
        sql<{ n: number }>`select count(*)::int as n from memory_embeddings e join memories m on m.org_id = e.org_id and m.id = e.memory_id
          where e.org_id = ${c.org.id} and e.model = 'bge-small-en-v1.5-int8' and m.superseded_by is null`,
      );
      return rows[0]!.n;
    };
    const agrees = async (embedded: number) => {
      expect(await exact()).toBe(embedded);
      expect((await status(c)).embedded).toBe(embedded);
    };
    await allEmbedded(c);
    await agrees(4);
    // An edit drops the vector with the old text, and the curator embeds the new one.
    expect(
      (await stack.api.put(`/api/memories/${saved[1]}`, { token: c.token, body: { content: 'The VPN needs a hardware key and a PIN.' } }))
        .status,
    ).toBe(200);
    await allEmbedded(c);
    await agrees(4);
    expect((await stack.api.delete(`/api/memories/${saved[2]}`, { token: c.token })).status).toBe(204);
    await agrees(3);
    // A vector of another model (as after a change of model), and a superseded memory's vector, do not count.
    const db = stack.orm.em.fork();
    await query(db, sql`update memory_embeddings set model = 'another-model' where memory_id = ${saved[0]}`);
    await agrees(2);
    await query(db, sql`update memory_embeddings set model = 'bge-small-en-v1.5-int8' where memory_id = ${saved[0]}`);
    await query(db, sql`update memories set superseded_by = ${saved[0]} where id = ${saved[3]}`);
    await agrees(2);
  });
});

describe('consolidation by meaning', () => {
  it('proposes memories that say the same in other words as duplicates', async () => {
    await query(stack.orm.em.fork(), sql`update orgs set plan = 'team' where id = ${b.org.id}`);
    const x = (await save(b, { content: 'The billing service stores invoices in PostgreSQL.', namespace: 'dedupe' })).body.id;
    const y = (await save(b, { content: 'Invoices are kept by the billing service in a Postgres database.', namespace: 'dedupe' })).body.id;
    await save(b, { content: 'Lunch is served at noon in the cafeteria.', namespace: 'dedupe' });
    await allEmbedded(b);
    const res = await stack.api.post('/api/consolidate', { token: b.token, body: { action: 'detect', namespace: 'dedupe' } });
    expect(res.body).toMatchObject({ scanned: 3, proposalsCreated: 1 });
    const [proposal] = (await stack.api.get('/api/consolidate?kind=duplicate', { token: b.token })).body.proposals;
    expect([proposal.memory_a_id, proposal.memory_b_id].sort()).toEqual([x, y].sort());
    expect(proposal.note).toContain('similar in meaning');
    expect(proposal.score).toBeGreaterThanOrEqual(0.9);
    // The floor is the model's: the same pair is found again (and known) at bge's, not under a stricter one.
    const model = 'bge-small-en-v1.5-int8';
    expect(await findCandidates(stack.orm.em.fork(), b.org.id, 'dedupe', 0.8, { model })).toMatchObject({ proposals: [], alreadyKnown: 1 });
    expect(
      await findCandidates(stack.orm.em.fork(), b.org.id, 'dedupe', 0.8, { model, nearDuplicate: Math.min(0.999, proposal.score + 0.01) }),
    ).toMatchObject({ proposals: [], alreadyKnown: 0 });
  });
});

describe('memories like this one', () => {
  it('ranks the org’s other memories by meaning from the memory’s own vector, with filters, tenancy and the MCP tool', async () => {
    const c = await signUp(stack.api);
    const put = async (content: string, namespace: string, tags: string[] = []) =>
      (await save(c, { content, namespace, tags })).body.id as string;
    const deploys = await put('Deploys to production happen on Tuesdays after the change review.', 'ops');
    const releases = await put('We ship a new release to our customers every Tuesday.', 'ops');
    const copy = await put('Deploys to production happen on Tuesdays after the change review.', 'archive');
    const plants = await put('The office plants are watered by an outside company on Mondays.', 'office', ['office']);
    const cat = await put("Ivan's cat is called Pixel and sleeps on the office printer.", 'office', ['office', 'pets, mostly']);
    await allEmbedded(c);
    const similar = (id: string, query = '', who = c) => stack.api.get(`/api/memories/${id}/similar${query}`, { token: who.token });

    const res = await similar(deploys);
    expect(res.status).toBe(200);
    const hits = res.body.hits as { id: string; score: number; found_by: string[] }[];
    // The memory itself is left out; a copy of its text comes first, then the memory that says the same in other words.
    expect(hits.map((h) => h.id)).not.toContain(deploys);
    expect(hits.map((h) => h.id).slice(0, 2)).toEqual([copy, releases]);
    expect(hits.map((h) => h.id).sort()).toEqual([copy, releases, plants, cat].sort());
    expect(hits[0]!.score).toBeGreaterThan(0.999);
    expect(hits[0]!.found_by).toEqual(['semantic']);
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((x, y) => y - x));
    // The same as a semantic search with the memory's vector: scores are cosine similarities.
    const [row] = await query(
      stack.orm.em.fork(),
      sql<{ cosine: number }>`select 1 - (a.embedding <=> b.embedding) as cosine from memory_embeddings a, memory_embeddings b
      where a.memory_id = ${deploys} and b.memory_id = ${releases} and a.passage = 0 and b.passage = 0`,
    );
    expect(hits[1]!.score).toBeCloseTo(Number(row!.cosine), 5);

    expect((await similar(deploys, '?namespace=ops')).body.hits.map((h: { id: string }) => h.id)).toEqual([releases]);
    expect((await similar(deploys, '?k=1')).body.hits.map((h: { id: string }) => h.id)).toEqual([copy]);
    expect((await similar(deploys, '?namespace=nowhere')).body.hits).toEqual([]);
    // Tags as repeated parameters, all of them required (a tag may hold a comma).
    expect((await similar(deploys, '?tags=office')).body.hits.map((h: { id: string }) => h.id).sort()).toEqual([plants, cat].sort());
    expect(
      (await similar(deploys, `?tags=office&tags=${encodeURIComponent('pets, mostly')}`)).body.hits.map((h: { id: string }) => h.id),
    ).toEqual([cat]);
    for (const bad of ['?k=0', '?k=51', '?created_after=yesterday', '?tags=']) expect((await similar(deploys, bad)).status).toBe(400);
    // Another org's memory, an unknown id and a malformed one.
    expect((await similar(ids.deploys!)).status).toBe(404);
    expect((await similar(randomUUID())).status).toBe(404);
    expect((await similar('not-a-uuid')).status).toBe(400);
    // Another org holding the very same sentence never shows in the hits, nor c's memories in theirs.
    expect(hits.map((h) => h.id)).not.toContain(ids.foreignDeploys);
    expect((await similar(ids.foreignDeploys!, '', b)).body.hits.map((h: { id: string }) => h.id)).not.toContain(copy);

    const client = new Client({ name: 'semantic-search-tests', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', stack.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${c.token}` } },
      }),
    );
    const tool = await client.callTool({ name: 'find_similar_memories', arguments: { id: deploys, k: 2, namespace: 'ops' } });
    expect((tool.structuredContent as { hits: { id: string }[] }).hits.map((h) => h.id)).toEqual([releases]);
    const tagged = await client.callTool({ name: 'find_similar_memories', arguments: { id: deploys, tags: ['office', 'pets, mostly'] } });
    expect((tagged.structuredContent as { hits: { id: string }[] }).hits.map((h) => h.id)).toEqual([cat]);
    const missing = await client.callTool({ name: 'find_similar_memories', arguments: { id: ids.deploys! } });
    expect(missing.isError).toBe(true);
    await client.close();
  });
});
