// The data-plane benchmark: seeds one org through the HTTP API and measures save throughput, search,
// bulk search and filtered list latency at each checkpoint (searches in two or three words, and in whole
// questions); with a model, how fresh a save's vector is, and what
// semantic search through the index finds against an exact scan of the org (the paraphrase set's answers among
// its memories included). Run with `bash scripts/bench.sh`.
import pg from 'pg';
import { createLocalEmbedder } from '../infra/embeddings/local.ts';
import { localModelId } from '../infra/embeddings/local-models.ts';
import { ApiClient } from '../test/support/api-client.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';
import { freshness } from './lib/freshness.ts';
import { cpuByKind, cpuSeconds, cpuSpent, memoryMb } from './lib/proc.ts';
import { closedLoop, summarize, type Summary } from './lib/stats.ts';
import { askParaphraseSet, evidenceRecall, K, loadParaphraseSet, MODES, saveParaphraseSet } from './quality/paraphrase-set.ts';
import { vectorLiteral } from '../domain/store/vectors.ts';

const api = new ApiClient(process.env.BENCH_API_URL ?? 'http://127.0.0.1:3099');
const checkpoints = (process.env.BENCH_CHECKPOINTS ?? '10000,100000').split(',').map(Number);
const dataDir = process.env.BENCH_DATA_DIR ?? new URL('../../shared/data', import.meta.url).pathname;
const corpus = new Corpus(dataDir);
// BENCH_CORPUS=agent (default): agent-style memories with a long-tailed vocabulary; =scientific: only
// recombined abstract sentences, a narrow vocabulary where every query term is common (a stress case).
const kind = process.env.BENCH_CORPUS ?? 'agent';
const agent = agentMemoryGenerator(corpus);
const makeContent = kind === 'agent' ? () => agent.memory() : () => corpus.memory();
const makeQuery = kind === 'agent' ? () => agent.query() : () => corpus.shortQuery();
// Questions as people write them, where makeQuery asks in two or three words: the Cranfield and CISI queries whole
// (4 to 342 words, median 20; 3 to 138 distinct terms, median 13).
const askQuestion = () => corpus.pick(corpus.queries);
// The API keeps the vectors of the queries an org asked lately (domain/search/query-vectors.ts). The rows that embed
// a query ask each text for the first time in the run, as they did before that cache (a run starts its own API, with
// nothing kept): a text already asked is drawn again, up to 50 times. One row asks the semantic row's queries again.
const asked = new Set<string>();
let askedTwice = 0;
const firstTime = (ask: () => string) => () => {
  for (let tries = 0; tries < 50; tries++) {
    const text = ask();
    if (!asked.has(text)) {
      asked.add(text);
      return text;
    }
  }
  askedTwice += 1;
  return ask();
};
const newQuery = firstTime(makeQuery);
const newQuestion = firstTime(askQuestion);
const NAMESPACES = Array.from({ length: 20 }, (_, i) => `project-${i}`);
const TAGS = Array.from({ length: 50 }, (_, i) => `tag-${i}`);

const expectOk = (status: number, what: string) => {
  if (status >= 300) throw new Error(`${what} answered ${status}`);
};

// The free plan stops at 500 memories; the benchmark org is put on a paid plan directly, as the billing
// webhook would.
async function upgrade(orgId: string) {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  await db.query(`update orgs set plan = 'enterprise' where id = $1`, [orgId]);
  await db.end();
}

// Reads are measured in steady state: right after a bulk load, autovacuum would otherwise be busy with the
// freshly written postings while the queries run.
async function settle() {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  await db.query(
    'vacuum (analyze) lexical_staged, lexical_blocks, lexical_docs, lexical_tombstones, memories, counters, memory_embeddings',
  );
  await db.end();
}

// Bytes on disk per memory: the org's tables with their indexes and TOAST (the benchmark database holds this
// one org), divided by its memories.
async function bytesPerMemory(): Promise<number> {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const { rows } = await db.query<{ bytes: string; memories: string }>(
    `select (select sum(pg_total_relation_size(t))
      from unnest(array['memories', 'lexical_staged', 'lexical_blocks', 'lexical_docs', 'lexical_tombstones', 'memory_embeddings',
        'namespaces', 'counters', 'events', 'outbox']::regclass[]) t) as bytes,
            (select count(*) from memories) as memories`,
  );
  await db.end();
  return Math.round(Number(rows[0]!.bytes) / Number(rows[0]!.memories));
}

// Resident and peak memory of a process, in MB.
function memoryOf(pid: string | undefined): string {
  const { now, peak } = memoryMb(pid);
  return `${now} MB now, ${peak} MB peak`;
}

// Whether the service embeds at all (EMBEDDING_PROVIDER=none runs the benchmark lexical-only: the growth of
// lexical search and saves, without the model's CPU).
async function withModel(token: string): Promise<boolean> {
  return ((await api.get('/api/memories/embeddings', { token })).body as { model: string | null }).model !== null;
}

// Waits until the org's curator has embedded every memory; returns how long that took and the worker's CPU.
async function embedded(token: string): Promise<{ seconds: number; cpu: number; count: number }> {
  const started = performance.now();
  const cpu = cpuSeconds(process.env.STACK_WORKER_PID);
  let count = 0;
  for (;;) {
    const res = await api.get('/api/memories/embeddings', { token });
    expectOk(res.status, 'embedding status');
    const status = res.body as { total: number; embedded: number; model: string | null };
    count = status.embedded;
    if (status.model === null || status.embedded >= status.total) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return {
    seconds: Math.round((performance.now() - started) / 100) / 10,
    cpu: Math.round(cpuSeconds(process.env.STACK_WORKER_PID) - cpu),
    count,
  };
}

// Waits until the org's curator has folded every staged posting into blocks (domain/search/fold.ts); returns
// how long that took after seeding ended, and how many memories were still staged when it ended.
async function folded(orgId: string): Promise<{ seconds: number; staged: number }> {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const started = performance.now();
  const stagedNow = async () =>
    Number((await db.query<{ n: string }>('select count(*) as n from lexical_staged where org_id = $1', [orgId])).rows[0]!.n);
  const staged = await stagedNow();
  while ((await stagedNow()) > 0) await new Promise((r) => setTimeout(r, 500));
  await db.end();
  return { seconds: Math.round((performance.now() - started) / 100) / 10, staged };
}

async function account() {
  const res = await api.post('/api/auth/signup', {
    body: { email: `bench-${Date.now()}@example.test`, password: 'benchmark-password', name: 'Bench', org_name: 'Bench Org' },
  });
  expectOk(res.status, 'signup');
  await upgrade(res.body.org.id);
  const tokens: string[] = [res.body.api_token.raw];
  for (let i = 0; i < 7; i++)
    tokens.push((await api.post('/api/auth/tokens', { token: tokens[0], body: { name: `bench-${i}` } })).body.raw);
  return { orgId: res.body.org.id as string, tokens };
}

function memoryBody() {
  const tagCount = 1 + Math.floor(corpus.random() * 3);
  return {
    content: makeContent(),
    namespace: NAMESPACES[Math.floor(corpus.random() ** 2 * NAMESPACES.length)],
    tags: Array.from({ length: tagCount }, () => corpus.pick(TAGS)),
    source: corpus.pick(['agent', 'cli', 'extension']),
    metadata: { priority: Math.floor(corpus.random() * 5), kind: corpus.pick(['fact', 'preference', 'event', 'note']) },
  };
}

// BENCH_SEED=batch seeds through POST /api/memories/batch (500 a call, 4 at a time): 1,000,000 memories in minutes
// rather than the quarter of an hour single saves take, when what a run measures is the org at that size.
const seedInBatches = process.env.BENCH_SEED === 'batch';
const BATCH = 500;

async function seed(tokens: string[], count: number) {
  if (seedInBatches) {
    const run = await closedLoop(4, Math.ceil(count / BATCH), async (call) => {
      const memories = Array.from({ length: Math.min(BATCH, count - call * BATCH) }, memoryBody);
      const res = await api.post('/api/memories/batch', { token: tokens[call % tokens.length], body: { memories } });
      if (res.status !== 200 || res.body.created !== memories.length) throw new Error(`batch answered ${res.status}: ${res.text.slice(0, 300)}`);
    });
    return { ...run, perSecond: Math.round(count / run.seconds) };
  }
  return closedLoop(32, count, async (i) => {
    const res = await api.post('/api/memories', { token: tokens[i % tokens.length], body: memoryBody() });
    expectOk(res.status, 'save');
  });
}

async function measure(tokens: string[], model: boolean) {
  const token = tokens[0]!;
  const searchRun = await closedLoop(1, 400, async () => {
    expectOk((await api.post('/api/memories/search', { token, body: { query: makeQuery(), k: 10 } })).status, 'search');
  });
  // One namespace, the scope an agent or a user usually searches in (the 20 namespaces hold 1% to 23% each).
  const searchNamespace = await closedLoop(1, 200, async () => {
    expectOk(
      (await api.post('/api/memories/search', { token, body: { query: makeQuery(), k: 10, namespace: corpus.pick(NAMESPACES) } })).status,
      'namespace search',
    );
  });
  const searchFiltered = await closedLoop(1, 200, async () => {
    const body = { query: makeQuery(), k: 10, namespace: corpus.pick(NAMESPACES), tags: [corpus.pick(TAGS)] };
    expectOk((await api.post('/api/memories/search', { token, body })).status, 'filtered search');
  });
  const searchQuestion = await closedLoop(1, 200, async () => {
    expectOk((await api.post('/api/memories/search', { token, body: { query: askQuestion(), k: 10 } })).status, 'question search');
  });
  const searchConcurrent = await closedLoop(4, 400, async () => {
    expectOk((await api.post('/api/memories/search', { token, body: { query: makeQuery(), k: 10 } })).status, 'search');
  });
  const bulk = await closedLoop(1, 40, async () => {
    const queries = Array.from({ length: 25 }, () => makeQuery());
    expectOk((await api.post('/api/memories/search/bulk', { token, body: { queries, k: 5 } })).status, 'bulk');
  });
  const byMode = async (mode: string, filtered: boolean, ask = newQuery, requests = 300) =>
    !model
      ? null
      : summarize(
          (
            await closedLoop(1, requests, async () => {
              const filters = filtered ? { namespace: corpus.pick(NAMESPACES), tags: [corpus.pick(TAGS)] } : {};
              expectOk(
                (await api.post('/api/memories/search', { token, body: { query: ask(), k: 10, mode, ...filters } })).status,
                `${mode} search`,
              );
            })
          ).latencies,
        );
  const semanticQueries: string[] = [];
  const semantic = await byMode('semantic', false, () => {
    const text = newQuery();
    semanticQueries.push(text);
    return text;
  });
  const semanticAgain = await byMode('semantic', false, () => semanticQueries.shift()!, semanticQueries.length);
  const semanticFiltered = await byMode('semantic', true);
  const hybrid = await byMode('hybrid', false);
  const hybridFiltered = await byMode('hybrid', true);
  // 150 of the 337 questions at each of two checkpoints, so that each is asked once.
  const hybridQuestion = await byMode('hybrid', false, newQuestion, 150);
  // Memories like one (GET /api/memories/:id/similar), asked for memories that semantic search found, so they have
  // their vectors.
  const similar = !model
    ? null
    : await (async () => {
        const pool: string[] = [];
        for (let i = 0; i < 30; i++) {
          const res = await api.post('/api/memories/search', { token, body: { query: newQuery(), k: 10, mode: 'semantic' } });
          expectOk(res.status, 'semantic search');
          pool.push(...(res.body.hits as { id: string }[]).map((h) => h.id));
        }
        const run = await closedLoop(1, 300, async (i) => {
          expectOk((await api.get(`/api/memories/${pool[i % pool.length]}/similar`, { token })).status, 'similar');
        });
        return summarize(run.latencies);
      })();
  const bulkHybrid = !model
    ? null
    : await closedLoop(1, 40, async () => {
        const queries = Array.from({ length: 25 }, () => newQuery());
        expectOk((await api.post('/api/memories/search/bulk', { token, body: { queries, k: 5, mode: 'hybrid' } })).status, 'bulk hybrid');
      });
  const list = await closedLoop(1, 300, async () => {
    const body = {
      namespace: corpus.pick(NAMESPACES),
      tags: [corpus.pick(TAGS)],
      order: corpus.pick(['updated_desc', 'newest']),
      limit: 50,
    };
    expectOk((await api.post('/api/memories/list', { token, body })).status, 'list');
  });
  const listMeta = await closedLoop(1, 200, async () => {
    const body = { metadata_filter: { kind: corpus.pick(['fact', 'note']), priority: Math.floor(corpus.random() * 5) }, limit: 50 };
    expectOk((await api.post('/api/memories/list', { token, body })).status, 'list');
  });
  const writes = await closedLoop(64, 5000, async (i) => {
    expectOk((await api.post('/api/memories', { token: tokens[i % tokens.length], body: memoryBody() })).status, 'save');
  });
  return {
    search: summarize(searchRun.latencies),
    searchNamespace: summarize(searchNamespace.latencies),
    searchFiltered: summarize(searchFiltered.latencies),
    searchQuestion: summarize(searchQuestion.latencies),
    searchConcurrentPerSecond: searchConcurrent.perSecond,
    bulk: summarize(bulk.latencies),
    semantic,
    semanticAgain,
    semanticFiltered,
    similar,
    hybrid,
    hybridFiltered,
    hybridQuestion,
    bulkHybrid: bulkHybrid && summarize(bulkHybrid.latencies),
    list: summarize(list.latencies),
    listMetadata: summarize(listMeta.latencies),
    savesPerSecond: writes.perSecond,
    saveLatency: summarize(writes.latencies),
  };
}

// A row of the table, or nothing for what this run did not measure (semantic and hybrid without a model).
const row = (name: string, s: Summary | null) => (s ? [`| ${name} | ${s.p50} | ${s.p95} | ${s.p99} | ${s.count} |`] : []);

// BENCH_REUSE=1 (scripts/bench.sh keeps the database then): no seeding, the largest org an earlier run seeded
// is measured again at the size it has, e.g. after a change to search at 1,000,000 memories, which take half an hour to seed.
async function lastAccount() {
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const { rows } = await db.query<{ email: string; org_id: string; memories: string }>(
    `select u.email, m.org_id, (select count(*) from memories where org_id = m.org_id) as memories from users u
      join memberships m on m.user_id = u.id
      where u.email like 'bench-%@example.test' order by memories desc limit 1`,
  );
  await db.end();
  if (!rows[0]) throw new Error('BENCH_REUSE=1: no org seeded by an earlier run in this database');
  const session = await api.post('/api/auth/login', { body: { email: rows[0].email, password: 'benchmark-password' } });
  expectOk(session.status, 'login');
  // An earlier run's tokens are revoked first: a user holds at most 100 live tokens in an org, which repeated runs
  // would otherwise reach.
  const earlier = (await api.get<{ id: string; name: string | null }[]>('/api/auth/tokens', { cookie: session.cookie })).body;
  for (const t of earlier.filter((t) => t.name?.startsWith('bench-again-')))
    expectOk((await api.delete(`/api/auth/tokens/${t.id}`, { cookie: session.cookie })).status, 'revoke token');
  const tokens: string[] = [];
  for (let i = 0; i < 8; i++) {
    const issued = await api.post('/api/auth/tokens', { cookie: session.cookie, body: { name: `bench-again-${i}` } });
    expectOk(issued.status, 'token');
    tokens.push(issued.body.raw);
  }
  return { orgId: rows[0].org_id, tokens, seeded: Number(rows[0].memories) };
}

const reuse = process.env.BENCH_REUSE === '1';
const { orgId, tokens, seeded: already } = reuse ? await lastAccount() : { ...(await account()), seeded: 0 };
// Measuring again, the saves must not repeat the seeding's texts (a repeated text reuses its vector, and would
// not be embedded); the vocabulary the queries draw on stays the same.
if (reuse) corpus.reseed(already);
const model = await withModel(tokens[0]!);
let seeded = already;
for (const target of reuse ? [already] : checkpoints) {
  const run = await seed(tokens, target - seeded);
  seeded = target;
  if (!reuse)
    process.stdout.write(
      `\nseeded to ${target} memories: ${run.perSecond} saves/s over ${run.seconds} s ` +
        `(${seedInBatches ? 'batches of 500, 4 at a time' : 'concurrency 32'}, 8 tokens)\n`,
    );
  const fold = await folded(orgId);
  process.stdout.write(`postings folded ${fold.seconds} s after seeding ended (${fold.staged} memories were still staged)\n`);
  if (model) {
    const caughtUp = await embedded(tokens[0]!);
    process.stdout.write(
      `embeddings caught up ${caughtUp.seconds} s after seeding ended (${caughtUp.count} vectors; worker CPU meanwhile ` +
        `${caughtUp.cpu} s)\n`,
    );
  }
  await settle();
  const m = await measure(tokens, model);
  const bytes = await bytesPerMemory();
  seeded += 5000;
  process.stdout.write(
    [
      `\n### ${target.toLocaleString('en')} memories (${kind} corpus)\n`,
      '| operation | p50 ms | p95 ms | p99 ms | requests |',
      '|---|---|---|---|---|',
      ...row('search, k 10 (2-3 word queries)', m.search),
      ...row('search in one namespace', m.searchNamespace),
      ...row('search with namespace + tag filters', m.searchFiltered),
      ...row('search, k 10, whole questions (median 20 words)', m.searchQuestion),
      ...row('bulk search, 25 queries, k 5', m.bulk),
      ...row('semantic search, k 10', m.semantic),
      ...row('semantic search, k 10, the same queries asked again', m.semanticAgain),
      ...row('semantic search with namespace + tag filters', m.semanticFiltered),
      ...row('memories like one (GET /api/memories/:id/similar), k 10', m.similar),
      ...row('hybrid search, k 10', m.hybrid),
      ...row('hybrid search with namespace + tag filters', m.hybridFiltered),
      ...row('hybrid search, whole questions', m.hybridQuestion),
      ...row('bulk hybrid search, 25 queries, k 5', m.bulkHybrid),
      ...row('list, namespace + tag filter, 50 rows + total', m.list),
      ...row('list, metadata_filter, 50 rows + total', m.listMetadata),
      ...row('POST /api/memories at concurrency 64', m.saveLatency),
      '',
      `search throughput at concurrency 4: ${m.searchConcurrentPerSecond} requests/s`,
      `queries the semantic and hybrid rows asked a second time, for want of new ones (so far): ${askedTwice}`,
      `POST /api/memories throughput (8 tokens, concurrency 64): ${m.savesPerSecond} requests/s`,
      `bytes on disk per memory (memories, postings, vectors, counters, events, outbox, with indexes): ${bytes}`,
      '',
    ].join('\n'),
  );
}
// Freshness is measured from an empty backlog (the measurement's own 5,000 saves are embedded first).
if (model) {
  process.stdout.write('\n');
  for (const pollMs of [10, 250]) {
    await embedded(tokens[0]!);
    const before = cpuByKind();
    // Saves at a steady 50 per second (open loop) for 20 s.
    const save = async () => {
      const res = await api.post('/api/memories', { token: tokens[0]!, body: memoryBody() });
      expectOk(res.status, 'save');
      return res.body.id as string;
    };
    const fresh = await freshness(orgId, { save, perSecond: 50, count: 1000, pollMs });
    // The CPU each kind of process used over the stream says what competed with the model when the lag grew.
    process.stdout.write(
      `from a save's 201 to its vector (found semantically) at 50 saves/s, polled every ${pollMs} ms, to its commit: p50 ` +
        `${fresh.p50} ms, p95 ${fresh.p95} ms, p99 ${fresh.p99} ms (${fresh.count} saves; as the poller saw them: p50 ` +
        `${fresh.seen.p50}, p95 ${fresh.seen.p95}; CPU seconds meanwhile: ${cpuSpent(before, cpuByKind())})\n`,
    );
  }
  const recall = await recallAgainstExact(tokens[0]!, orgId, true);
  process.stdout.write(
    `filtered semantic search (namespace + tag) against an exact scan: recall@10 ${recall.recall}, ${recall.full} of ` +
      `${recall.queries} queries got min(10, matches) rows\n`,
  );
  // Unfiltered, the HNSW index answers alone (efSearch: 64 for k 10); the agent corpus is dense, so near-ties abound.
  const unfiltered = await recallAgainstExact(tokens[0]!, orgId, false);
  process.stdout.write(`semantic search (the org alone) against an exact scan: recall@10 ${unfiltered.recall}\n`);
  await paraphrasesAmongTheOrg(tokens[0]!, orgId);
}
if (model) await newOrgBeside();
process.stdout.write(`API ${memoryOf(process.env.STACK_API_PID)}; worker ${memoryOf(process.env.STACK_WORKER_PID)}\n`);
// The API's cache of postings blocks over the whole run (LEXICAL_CACHE_MB), from its /metrics.
const metrics = (await api.get('/metrics', { token: process.env.METRICS_TOKEN })).text;
const metric = (pattern: string) => Number(new RegExp(`^${pattern} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
const [hits, misses] = [
  metric('memsvc_lexical_cache_blocks_total\\{result="hit"\\}'),
  metric('memsvc_lexical_cache_blocks_total\\{result="miss"\\}'),
];
process.stdout.write(
  `lexical block cache: ${Math.round(metric('memsvc_lexical_cache_bytes') / 2 ** 20)} MB held, ${hits} blocks from it and ` +
    `${misses} read (${Math.round((100 * hits) / (hits + misses))}% hits)\n`,
);

// The semantic route's answers against an exact scan in SQL (no index) of the same filter (namespace + tag, or the
// org alone), ranked by the same query vector, computed here with the same model.
// The org's 10 memories nearest to the vector, every one scored (in a namespace, with a tag, when given).
async function exactTop10(
  db: pg.Client,
  orgId: string,
  vector: Float32Array,
  only?: { namespace: string; tag: string },
): Promise<string[]> {
  const { rows } = await db.query<{ memory_id: string }>(
    `select e.memory_id from memory_embeddings e join memories m on m.org_id = e.org_id and m.id = e.memory_id
      join namespaces n on n.org_id = m.org_id and n.id = m.namespace_id
      where m.org_id = $4 and ($5 = false or (n.name = $1 and m.tags @> array[$2])) and m.superseded_by is null
      group by e.memory_id order by min(e.embedding <=> $3::vector) limit 10`,
    [only?.namespace ?? '', only?.tag ?? '', vectorLiteral(vector), orgId, only !== undefined],
  );
  return rows.map((r) => r.memory_id);
}

async function recallAgainstExact(
  token: string,
  orgId: string,
  filtered: boolean,
): Promise<{ recall: number; full: number; queries: number }> {
  const embedder = await createLocalEmbedder({
    modelDir: process.env.EMBEDDING_MODEL_DIR!,
    model: localModelId(process.env.EMBEDDING_LOCAL_MODEL),
    sessions: 1,
    threads: 1,
  });
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  let found = 0;
  let expected = 0;
  let full = 0;
  const queries = 100;
  for (let i = 0; i < queries; i++) {
    const namespace = corpus.pick(NAMESPACES);
    const tag = corpus.pick(TAGS);
    const query = makeQuery();
    const res = await api.post('/api/memories/search', {
      token,
      body: { query, k: 10, mode: 'semantic', ...(filtered ? { namespace, tags: [tag] } : {}) },
    });
    expectOk(res.status, 'semantic search');
    const got = new Set((res.body.hits as { id: string }[]).map((h) => h.id));
    const [vector] = await embedder.embedQueries([query]);
    const exact = await exactTop10(db, orgId, vector!, filtered ? { namespace, tag } : undefined);
    expected += exact.length;
    found += exact.filter((id) => got.has(id)).length;
    if (got.size === exact.length) full += 1;
  }
  await db.end();
  return { recall: expected ? Math.round((found / expected) * 1000) / 1000 : NaN, full, queries };
}

// The paraphrase set (bench/quality/paraphrase) saved among the org's memories and asked in the whole org: whether
// the answers an exact scan finds among 100,000 memories of the same kind are found through the HNSW index too (in a
// fresh org of 600 memories, as the paraphrase suite asks them, every search is exact). The set is deleted after, so a
// reused database does not gather copies of it.
async function paraphrasesAmongTheOrg(token: string, orgId: string) {
  const { memories, questions } = loadParaphraseSet();
  const refOf = await saveParaphraseSet(api, token, memories, 'paraphrase-');
  const ids = [...refOf.keys()];
  await embedded(token);
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const embedder = await createLocalEmbedder({
    modelDir: process.env.EMBEDDING_MODEL_DIR!,
    model: localModelId(process.env.EMBEDDING_LOCAL_MODEL),
    sessions: 1,
    threads: 1,
  });
  const vectors = await embedder.embedQueries(questions.map((q) => q.question));
  const exact: string[][] = [];
  for (const v of vectors) exact.push((await exactTop10(db, orgId, v)).map((id) => refOf.get(id) ?? id));
  const recall = { exact: evidenceRecall(questions, exact) } as Record<string, number>;
  for (const mode of MODES) recall[mode] = evidenceRecall(questions, await askParaphraseSet(api, token, questions, mode, refOf));
  await embedder.close();
  await closedLoop(8, ids.length, async (i) => {
    for (;;) {
      const res = await api.delete(`/api/memories/${ids[i]}`, { token });
      // A service started with its write rate limit on answers 429 (deletes count as writes); wait as told.
      if (res.status !== 429) return expectOk(res.status, 'delete');
      await new Promise((r) => setTimeout(r, 1000 * (Number(res.headers.get('retry-after')) || 1)));
    }
  });
  await db.end();
  const f = (x: number) => x.toFixed(3);
  process.stdout.write(
    `the paraphrase set's ${questions.length} questions among the org's memories, evidence recall@${K}: semantic ` +
      `${f(recall.semantic!)} (an exact scan ${f(recall.exact!)}), hybrid ${f(recall.hybrid!)}, lexical ${f(recall.lexical!)}\n`,
  );
}

// A tenant that arrives beside the big one: 2,000 memories saved, embedded and searched at once, before any
// ANALYZE, so the planner's statistics do not know the org yet (they estimate it at one row). Searches must not
// depend on them: a join planned for one row read all the org's memories again for each candidate.
async function newOrgBeside() {
  const res = await api.post('/api/auth/signup', {
    body: { email: `bench-new-${Date.now()}@example.test`, password: 'benchmark-password', name: 'Bench', org_name: 'New Org' },
  });
  expectOk(res.status, 'signup');
  await upgrade(res.body.org.id);
  const token: string = res.body.api_token.raw;
  await closedLoop(32, 2000, async () => expectOk((await api.post('/api/memories', { token, body: memoryBody() })).status, 'save'));
  await embedded(token);
  const rows: string[] = [];
  for (const mode of ['lexical', 'semantic', 'hybrid']) {
    for (const filtered of [false, true]) {
      const run = await closedLoop(1, 100, async () => {
        const filters = filtered ? { namespace: corpus.pick(NAMESPACES), tags: [corpus.pick(TAGS)] } : {};
        expectOk(
          (await api.post('/api/memories/search', { token, body: { query: makeQuery(), k: 10, mode, ...filters } })).status,
          `${mode} search`,
        );
      });
      rows.push(...row(`${mode} search${filtered ? ' with namespace + tag filters' : ''}`, summarize(run.latencies)));
    }
  }
  process.stdout.write(
    [
      '\n### a new org of 2,000 memories beside it, before ANALYZE\n',
      '| operation | p50 ms | p95 ms | p99 ms | requests |',
      '|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}
