import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supersedeMemories } from '../../domain/memories/supersede.ts';
import { AS_OF_ANALYZE_MAX_BYTES, AS_OF_SCAN_MAX } from '../../domain/search/as-of.ts';
import { query, queryOne, sql } from '../../domain/sql.ts';
import { eventually, signUp, startStack, type SignedUp, type Stack } from '../support/stack.ts';

// Search as of a time (as_of): what the scope held then, superseded memories included, in every mode, through the
// search route, bulk search and the MCP tool, with the bundled model and the curator embedding what is saved.
let stack: Stack;
let a: SignedUp;
const MODES = ['lexical', 'semantic', 'hybrid'] as const;

interface Hit {
  id: string;
  score: number;
  relevance: number;
  found_by: string[];
  superseded_by?: string;
}

const save = (body: Record<string, unknown>, who = a) => stack.api.post('/api/memories', { token: who.token, body });
const search = (body: Record<string, unknown>, who = a) => stack.api.post('/api/memories/search', { token: who.token, body });
const bulk = (body: Record<string, unknown>) => stack.api.post('/api/memories/search/bulk', { token: a.token, body });
const ids = (res: { body: { hits: Hit[] } }) => res.body.hits.map((h) => h.id);
const allEmbedded = (who: SignedUp) =>
  eventually(async () => {
    const s = (await stack.api.get('/api/memories/embeddings', { token: who.token })).body;
    return s.total > 0 && s.embedded === s.total && s;
  }, 60_000);
// A moment strictly between two writes: timestamps are kept to the millisecond.
const instant = async () => {
  await sleep(5);
  const at = Date.now();
  await sleep(5);
  return at;
};
const supersede = (successors: [string, string][], who = a) =>
  stack.orm.em.fork().transactional((tx) => supersedeMemories(tx, who.org.id, new Map(successors)));

// The standup moved: the old time was superseded by the new one after `before`, and `after` follows that.
const standup = { old: '', moved: '', before: 0, after: 0 };
const question = 'when is the team standup meeting';

beforeAll(async () => {
  stack = await startStack({ embeddings: true, env: { WRITE_RATE_LIMIT_PER_MINUTE: '0' } });
  a = await signUp(stack.api);
  const old = { content: 'The team standup meeting is at 9am in the blue room.', namespace: 'team', tags: ['meetings'], user_id: 'kim' };
  standup.old = (await save(old)).body.id;
  await save({ content: 'Lunch is served at noon in the cafeteria.', namespace: 'team', tags: ['food'], user_id: 'kim' });
  await allEmbedded(a);
  standup.before = await instant();
  standup.moved = (await save({ ...old, content: 'The team standup meeting moved to 10am in the green room.' })).body.id;
  await allEmbedded(a);
  await supersede([[standup.old, standup.moved]]);
  standup.after = await instant();
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

describe('search as of a time', () => {
  it('finds a memory superseded since as of a time before, and not now, in every mode', async () => {
    for (const mode of MODES) {
      const then = await search({ query: question, mode, as_of: standup.before });
      expect(then.status).toBe(200);
      expect(ids(then)).toContain(standup.old);
      expect(then.body.as_of).toBe(standup.before);
      expect(then.body.hits.find((h: Hit) => h.id === standup.old).superseded_by).toBe(standup.moved);
      const now = await search({ query: question, mode });
      expect(ids(now)).toContain(standup.moved);
      expect(ids(now)).not.toContain(standup.old);
      expect(now.body).not.toHaveProperty('as_of');
      const later = await search({ query: question, mode, as_of: standup.after });
      expect(ids(later)).toContain(standup.moved);
      expect(ids(later)).not.toContain(standup.old);
    }
  });

  it('leaves out a memory saved after the time, in every mode', async () => {
    for (const mode of MODES) {
      const then = await search({ query: question, mode, as_of: standup.before });
      expect(ids(then)).not.toContain(standup.moved);
      const before = await search({ query: question, mode, as_of: standup.before - 60_000 });
      expect(before.status).toBe(200);
      expect(before.body.hits).toEqual([]);
    }
  });

  it('leaves out a memory whose event time is after the time, until that time', async () => {
    const at = Date.now() + 86_400_000;
    const offsite = (await save({ content: 'The team offsite in Lisbon', namespace: 'plans', occurred_at: at })).body.id;
    await allEmbedded(a);
    const now = Date.now() + 1000;
    for (const mode of MODES) {
      expect(ids(await search({ query: 'team offsite Lisbon', mode, namespace: 'plans' }))).toEqual([offsite]);
      expect(ids(await search({ query: 'team offsite Lisbon', mode, namespace: 'plans', as_of: now }))).toEqual([]);
      expect(ids(await search({ query: 'team offsite Lisbon', mode, namespace: 'plans', as_of: at }))).toEqual([offsite]);
    }
  });

  it('applies every filter to what the scope held', async () => {
    const then = (filters: Record<string, unknown>, mode: string) => search({ query: question, mode, as_of: standup.before, ...filters });
    const old = await queryOne(
      stack.orm.em.fork(),
      sql<{ occurred_at: string }>`select occurred_at from memories where id = ${standup.old}`,
    );
    const occurred = new Date(old!.occurred_at).getTime();
    for (const mode of MODES) {
      for (const kept of [
        { namespace: 'team' },
        { tags: ['meetings'] },
        { user_id: 'kim' },
        { metadata_filter: {} },
        { filters: { tags: { in: ['meetings'] } } },
        { occurred_after: occurred, occurred_before: occurred },
      ]) {
        expect(ids(await then(kept, mode)), `${mode} ${JSON.stringify(kept)}`).toContain(standup.old);
      }
      for (const dropped of [
        { namespace: 'plans' },
        { namespace: 'nowhere' },
        { tags: ['food'] },
        { user_id: 'lee' },
        { agent_id: 'bot' },
        { metadata_filter: { team: 'sre' } },
        { filters: { NOT: { tags: { in: ['meetings'] } } } },
        { occurred_after: occurred + 1 },
        { occurred_before: occurred - 1 },
      ]) {
        expect(ids(await then(dropped, mode)), `${mode} ${JSON.stringify(dropped)}`).not.toContain(standup.old);
      }
    }
  });

  it('answers as of now as a search without as_of does, scores and relevance included, in every mode', async () => {
    const d = await signUp(stack.api);
    const notes = [
      'Deploys to production happen on Tuesdays after the change review.',
      'We ship a new release to our customers every Tuesday morning.',
      'The change review board meets on Mondays to approve deploys.',
      "Ivan's cat is called Pixel and sleeps on the office printer.",
      'Production incidents are reviewed every Friday afternoon.',
    ];
    for (const content of notes) await save({ content, namespace: 'ops', metadata: { parent_ref: 'handbook' } }, d);
    await allEmbedded(d);
    const now = Date.now() + 1000;
    for (const mode of MODES) {
      for (const filters of [{}, { namespace: 'ops' }]) {
        const body = { query: 'when do production deploys happen after review', mode, k: 5, explain: true, ...filters };
        const plain = (await search(body, d)).body;
        const asOf = (await search({ ...body, as_of: now }, d)).body;
        expect(asOf.as_of).toBe(now);
        expect(
          asOf.hits.map((h: Hit) => h.id),
          mode,
        ).toEqual(plain.hits.map((h: Hit) => h.id));
        asOf.hits.forEach((h: Hit, i: number) => {
          expect(h.score).toBeCloseTo(plain.hits[i].score, 9);
          expect(h.relevance).toBeCloseTo(plain.hits[i].relevance, 6);
        });
        expect(asOf.explain.terms).toEqual(plain.explain.terms);
      }
    }
  });

  it('ranks by BM25 with the statistics of the memories alive then, superseded ones included', async () => {
    const d = await signUp(stack.api);
    const put = async (content: string) => (await save({ content }, d)).body.id as string;
    const kept = await put('Kestrel notes: the kestrel hovers over the meadow.');
    const gone = await put('A kestrel nested on the church tower.');
    await put('The meadow is mowed in July.');
    const before = await instant();
    await supersede([[gone, kept]], d);
    const then = (await search({ query: 'kestrel', as_of: before }, d)).body.hits as Hit[];
    // Three memories, two holding the term: Lucene's idf and length normalization over those three.
    const lengths = await query(
      stack.orm.em.fork(),
      sql<{ id: string; doc_len: number }>`select id, doc_len from memories where org_id = ${d.org.id}`,
    );
    const avg = lengths.reduce((s, r) => s + r.doc_len, 0) / lengths.length;
    const len = (id: string) => lengths.find((r) => r.id === id)!.doc_len;
    const idf = Math.log(1 + (3 - 2 + 0.5) / (2 + 0.5));
    const bm25 = (tf: number, id: string) => (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * len(id)) / avg));
    expect(then.map((h) => h.id)).toEqual([kept, gone]);
    expect(then[0]!.score).toBeCloseTo(bm25(2, kept), 9);
    expect(then[1]!.score).toBeCloseTo(bm25(1, gone), 9);
  });

  it('finds nothing of a memory deleted since: deletion is for good', async () => {
    const note = (content: string) => save({ content, namespace: 'deleted' }).then((r) => r.body.id as string);
    const kept = await note('The staging password rotation happens quarterly');
    const gone = await note('The staging password rotation happened monthly before');
    await allEmbedded(a);
    const before = await instant();
    await supersede([
      [kept, standup.moved],
      [gone, standup.moved],
    ]);
    expect((await stack.api.delete(`/api/memories/${gone}`, { token: a.token })).status).toBe(204);
    for (const mode of MODES) {
      const res = await search({ query: 'staging password rotation', mode, namespace: 'deleted', as_of: before });
      expect(ids(res)).toEqual([kept]);
    }
  });

  it('reads time words against as_of unless reference_time is set', async () => {
    const at = Date.UTC(2031, 2, 15, 12);
    const day = 86_400_000;
    const res = await search({ query: 'standup yesterday', as_of: at, explain: true });
    expect(res.body.explain.time).toEqual({
      phrase: 'yesterday',
      after: Date.UTC(2031, 2, 14) - day,
      before: Date.UTC(2031, 2, 14) + 2 * day - 1,
    });
    const told = await search({ query: 'standup yesterday', as_of: at, reference_time: Date.UTC(2030, 0, 2), explain: true });
    expect(told.body.explain.time.after).toBe(Date.UTC(2030, 0, 1) - day);
  });

  it('searches in bulk as of a time, every query', async () => {
    for (const mode of MODES) {
      const res = await bulk({ queries: [question, 'blue room'], mode, as_of: standup.before });
      expect(res.status).toBe(200);
      for (const result of res.body.results) {
        expect(result.as_of).toBe(standup.before);
        expect(result.hits.map((h: Hit) => h.id)).toContain(standup.old);
        expect(result.hits.map((h: Hit) => h.id)).not.toContain(standup.moved);
      }
    }
  });

  it('searches as of a time through the MCP tool, which says what replaced a hit since', async () => {
    const client = new Client({ name: 'as-of-tests', version: '1.0.0' });
    const headers = { authorization: `Bearer ${a.token}` };
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', stack.baseUrl), { requestInit: { headers } }));
    const found = await client.callTool({ name: 'search_memories', arguments: { query: question, as_of: standup.before } });
    const answer = found.structuredContent as { hits: { id: string; superseded_by?: string }[]; as_of: string };
    expect(answer.as_of).toBe(new Date(standup.before).toISOString());
    expect(answer.hits.map((h) => h.id)).toContain(standup.old);
    expect(answer.hits.map((h) => h.id)).not.toContain(standup.moved);
    expect(answer.hits.find((h) => h.id === standup.old)!.superseded_by).toBe(standup.moved);
    const now = (await client.callTool({ name: 'search_memories', arguments: { query: question } })).structuredContent as typeof answer;
    expect(now.hits.map((h) => h.id)).not.toContain(standup.old);
    expect(now).not.toHaveProperty('as_of');
    const bad = await client.callTool({ name: 'search_memories', arguments: { query: question, as_of: -1 } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('as_of');
    await client.close();
  });

  it('refuses an as_of out of range or not an instant, naming it', async () => {
    for (const bad of [-1, 253402300800000, 1e16, 1.5, 'yesterday', null]) {
      for (const res of [await search({ query: question, as_of: bad }), await bulk({ queries: [question], as_of: bad })]) {
        expect(res.status, JSON.stringify(bad)).toBe(400);
        expect(res.body.error).toBe('validation_failed');
        expect([...new Set(res.body.issues.map((i: { path: string }) => i.path))]).toEqual(['body.as_of']);
      }
    }
  });

  it(`refuses an as_of search whose filters pass more than ${AS_OF_SCAN_MAX} memories then, and answers a narrower one`, async () => {
    const big = await signUp(stack.api);
    await save({ content: 'The one memory of the small project', namespace: 'small' }, big);
    await save({ content: 'seed', namespace: 'large' }, big);
    const em = stack.orm.em.fork();
    const large = await queryOne(em, sql<{ id: string }>`select id from namespaces where org_id = ${big.org.id} and name = 'large'`);
    await query(
      em,
      sql`insert into memories (id, org_id, namespace_id, content, stored_bytes, doc_len, source, created_at, updated_at)
        select gen_random_uuid(), ${big.org.id}, ${large!.id}, 'filler ' || g, 10, 1, 'api', now(), now()
          from generate_series(1, ${AS_OF_SCAN_MAX}) g`,
    );
    const at = Date.now() + 1000;
    for (const mode of ['lexical', 'hybrid']) {
      const res = await search({ query: 'memory', mode, as_of: at }, big);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'as_of_too_broad', max_memories: AS_OF_SCAN_MAX });
      expect(res.body.message).toMatch(/^as_of: /);
      const narrow = await search({ query: 'memory', mode, as_of: at, namespace: 'small' }, big);
      expect(narrow.status).toBe(200);
      expect(narrow.body.hits).toHaveLength(1);
    }
  });

  it(`refuses an as_of search whose memories superseded since hold more than ${AS_OF_ANALYZE_MAX_BYTES} bytes of text`, async () => {
    const big = await signUp(stack.api);
    const kept = (await save({ content: 'The memory that stays', namespace: 'long' }, big)).body.id;
    const em = stack.orm.em.fork();
    const long = await queryOne(em, sql<{ id: string }>`select id from namespaces where org_id = ${big.org.id} and name = 'long'`);
    const words = Math.ceil(AS_OF_ANALYZE_MAX_BYTES / 4 / 5) + 1;
    await query(
      em,
      sql`insert into memories (id, org_id, namespace_id, content, stored_bytes, doc_len, source, created_at, updated_at,
                                superseded_by, superseded_at)
        select gen_random_uuid(), ${big.org.id}, ${long!.id}, repeat('memo ', ${words}), 10, ${words}, 'api',
               now() - interval '1 hour', now(), ${kept}, now() + interval '1 hour'
          from generate_series(1, 4) g`,
    );
    const modes = ['lexical', 'hybrid'];
    for (const mode of modes) {
      const res = await search({ query: 'memory', mode, as_of: Date.now() }, big);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('as_of_too_broad');
    }
    // Three of them fit.
    await query(
      em,
      sql`delete from memories where id = (select id from memories where org_id = ${big.org.id} and superseded_by is not null limit 1)`,
    );
    for (const mode of modes) {
      const res = await search({ query: 'memory', mode, as_of: Date.now() }, big);
      expect(res.status).toBe(200);
      expect(res.body.hits.map((h: Hit) => h.id)).toContain(kept);
    }
  });
});
