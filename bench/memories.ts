// The data-plane benchmark: seeds one org through the HTTP API and measures save throughput, search,
// bulk search and filtered list latency at each checkpoint. Run with `bash scripts/bench.sh`.
import pg from 'pg';
import { ApiClient } from '../test/support/api-client.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';
import { closedLoop, summarize, type Summary } from './lib/stats.ts';

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
  await db.query('vacuum (analyze) memory_terms, memories, counters');
  await db.end();
}

async function account() {
  const res = await api.post('/api/auth/signup', {
    body: { email: `bench-${Date.now()}@example.test`, password: 'benchmark-password', name: 'Bench', org_name: 'Bench Org' },
  });
  expectOk(res.status, 'signup');
  await upgrade(res.body.org.id);
  const tokens: string[] = [res.body.api_token.raw];
  for (let i = 0; i < 7; i++) tokens.push((await api.post('/api/auth/tokens', { token: tokens[0], body: { name: `bench-${i}` } })).body.raw);
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

async function seed(tokens: string[], count: number) {
  const run = await closedLoop(32, count, async (i) => {
    const res = await api.post('/api/memories', { token: tokens[i % tokens.length], body: memoryBody() });
    expectOk(res.status, 'save');
  });
  return run;
}

async function measure(tokens: string[]) {
  const token = tokens[0]!;
  const searchRun = await closedLoop(1, 400, async () => {
    expectOk((await api.post('/api/memories/search', { token, body: { query: makeQuery(), k: 10 } })).status, 'search');
  });
  const searchFiltered = await closedLoop(1, 200, async () => {
    const body = { query: makeQuery(), k: 10, namespace: corpus.pick(NAMESPACES), tags: [corpus.pick(TAGS)] };
    expectOk((await api.post('/api/memories/search', { token, body })).status, 'filtered search');
  });
  const searchConcurrent = await closedLoop(4, 400, async () => {
    expectOk((await api.post('/api/memories/search', { token, body: { query: makeQuery(), k: 10 } })).status, 'search');
  });
  const bulk = await closedLoop(1, 40, async () => {
    const queries = Array.from({ length: 25 }, () => makeQuery());
    expectOk((await api.post('/api/memories/search/bulk', { token, body: { queries, k: 5 } })).status, 'bulk');
  });
  const list = await closedLoop(1, 300, async () => {
    const body = { namespace: corpus.pick(NAMESPACES), tags: [corpus.pick(TAGS)], order: corpus.pick(['updated_desc', 'newest']), limit: 50 };
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
    searchFiltered: summarize(searchFiltered.latencies),
    searchConcurrentPerSecond: searchConcurrent.perSecond,
    bulk: summarize(bulk.latencies),
    list: summarize(list.latencies),
    listMetadata: summarize(listMeta.latencies),
    savesPerSecond: writes.perSecond,
    saveLatency: summarize(writes.latencies),
  };
}

const row = (name: string, s: Summary) => `| ${name} | ${s.p50} | ${s.p95} | ${s.p99} | ${s.count} |`;

const { tokens } = await account();
let seeded = 0;
for (const target of checkpoints) {
  const run = await seed(tokens, target - seeded);
  seeded = target;
  process.stdout.write(`\nseeded to ${target} memories: ${run.perSecond} saves/s over ${run.seconds} s (concurrency 32, 8 tokens)\n`);
  await settle();
  const m = await measure(tokens);
  seeded += 5000;
  process.stdout.write(
    [
      `\n### ${target.toLocaleString('en')} memories (${kind} corpus)\n`,
      '| operation | p50 ms | p95 ms | p99 ms | requests |',
      '|---|---|---|---|---|',
      row('search, k 10 (2-3 word queries)', m.search),
      row('search with namespace + tag filters', m.searchFiltered),
      row('bulk search, 25 queries, k 5', m.bulk),
      row('list, namespace + tag filter, 50 rows + total', m.list),
      row('list, metadata_filter, 50 rows + total', m.listMetadata),
      row('POST /api/memories at concurrency 64', m.saveLatency),
      '',
      `search throughput at concurrency 4: ${m.searchConcurrentPerSecond} requests/s`,
      `POST /api/memories throughput (8 tokens, concurrency 64): ${m.savesPerSecond} requests/s`,
      '',
    ].join('\n'),
  );
}
