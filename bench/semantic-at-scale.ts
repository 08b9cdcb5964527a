// Semantic search in one org of 1,000,000 memories: the product's scale per tenant (issue 10's targets are at
// 100,000). The org's own HNSW index is built as the service builds it (buildOrgIndex), and searched through the
// domain's own call (searchMemories, with the query's vector given), with and without filters, against an exact
// scan. The memories are written straight into a scratch database with SQL, as lists-at-scale.ts does. Their
// vectors: embedding a million texts would take this machine about four hours, so BASE agent memories
// (bench/lib/agent-memories.ts) are embedded with the bundled model, and each memory's vector is one of them moved
// a third of the way toward another (l2_normalize(x + 0.5 y)): points among real ones, all distinct. The queries
// are the corpus's own (bench/lib/corpus.ts), embedded as queries.
//   ADMIN_DATABASE_URL=postgres://memsvc:memsvc@127.0.0.1:5433/postgres EMBEDDING_MODEL_DIR=... node bench/semantic-at-scale.ts
//   (N=... memories, BASE=... texts embedded; KEEP=1 keeps the scratch database, and REUSE=1 then searches it again
//   without writing it anew)
import { resolve } from 'node:path';
import { createLocalEmbedder } from '../infra/embeddings/local.ts';
import { migrate, openOrm } from '../infra/orm.ts';
import { compileFilters, type MemoryFilters } from '../domain/store/filters.ts';
import { searchMemories } from '../domain/search/search.ts';
import { semanticCandidates } from '../domain/search/semantic.ts';
import { buildOrgIndex, orgIndexName } from '../domain/store/vector-indexes.ts';
import { query, queryOne, sql } from '../domain/sql.ts';
import { agentMemoryGenerator } from './lib/agent-memories.ts';
import { Corpus } from './lib/corpus.ts';
import { createdAt, scratchDatabase, writeScaleOrg } from './lib/scale-org.ts';
import { summarize } from './lib/stats.ts';
import { vectorLiteral } from '../domain/store/vectors.ts';

const N = Number(process.env.N ?? 1_000_000);
const BASE = Number(process.env.BASE ?? 20_000);
const QUERIES = 200;
const RECALL_QUERIES = Number(process.env.RECALL_QUERIES ?? 50);
const reuse = Boolean(process.env.REUSE);
const scratch = await scratchDatabase('memsvc_semantic_bench', { reuse });
const orm = await openOrm({ databaseUrl: scratch.url, poolMax: 4 });
const em = () => orm.em.fork();
const exec = (statement: string) => orm.em.getConnection().execute(statement);
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(0);
const org = '00000000-0000-0000-0000-00000000b001';
const corpus = new Corpus(resolve(import.meta.dirname, '../../shared/data'));
const agent = agentMemoryGenerator(corpus);
const embedder = await createLocalEmbedder({ modelDir: process.env.EMBEDDING_MODEL_DIR! });
if (!reuse) await writeOrg();
const queries = await embedder.embedQueries(Array.from({ length: QUERIES }, (_, i) => (i % 2 === 0 ? agent.query() : corpus.shortQuery())));
await embedder.close();

async function writeOrg(): Promise<void> {
  await migrate(orm);
  let started = performance.now();
  await writeScaleOrg(exec, {
    org,
    slug: 'semantic-scale',
    n: N,
    content: `'memory number ' || i`,
    metadata: `jsonb_build_object('i', i % 1000)`,
  });
  console.log(`${N} memories written in ${seconds(started)} s`);

  started = performance.now();
  await exec(`create table bench_base (i int primary key, v vector(384))`);
  const CHUNK = 500;
  for (let from = 0; from < BASE; from += CHUNK) {
    const vectors = await embedder.embedDocuments(Array.from({ length: Math.min(CHUNK, BASE - from) }, () => agent.memory()));
    await query(
      em(),
      sql`insert into bench_base (i, v) select n + ${from} - 1, v::vector
        from unnest(${vectors.map(vectorLiteral)}::text[]) with ordinality as u(v, n)`,
    );
  }
  console.log(`${BASE} agent memories embedded in ${seconds(started)} s`);

  // Written as served by the org's own index (own_index), so that none of them goes into the shared one first.
  started = performance.now();
  await exec(`insert into memory_embeddings (memory_id, org_id, model, content_hash, embedding, own_index, passage)
    select m.id, m.org_id, '${embedder.model}', md5(m.content), l2_normalize(x.v + y.v * array_fill(0.5::real, array[384])::vector), true, 0
      from (select id, org_id, content, (substring(content from 15))::int as n from memories) m
      join bench_base x on x.i = m.n % ${BASE}
      join bench_base y on y.i = abs(hashint4(m.n)) % ${BASE}`);
  await exec('vacuum analyze memories, memory_embeddings');
  console.log(`${N} vectors written in ${seconds(started)} s`);

  started = performance.now();
  await buildOrgIndex(em(), org);
  const size = await queryOne(em(), sql<{ size: string }>`select pg_size_pretty(pg_relation_size(${orgIndexName(org)}::regclass)) as size`);
  console.log(`the org's HNSW index built in ${seconds(started)} s (${size!.size})\n`);
}

const vector = (i: number) => Promise.resolve({ vector: queries[i % QUERIES]!, model: embedder.model });
const search = async (i: number, k: number, filters: MemoryFilters) =>
  (await searchMemories(em(), org, { text: '', k, mode: 'semantic', filters }, vector(i))).hits;
// Created after the first (1 - share) of the memories: the newest share of them.
const newest = (share: number) => createdAt(Math.floor(N * (1 - share)));
const cases: [string, number, MemoryFilters][] = [
  ['k 10', 10, {}],
  ["k 100 (hybrid's depth)", 100, {}],
  ['k 10, a project (5%)', 10, { namespace: 'project-3' }],
  ['k 10, created in the last 3%', 10, { createdAfter: newest(0.03) }],
  ['k 10, created in the last 0.3%', 10, { createdAfter: newest(0.003) }],
  ['k 10, a project and a tag (1%)', 10, { namespace: 'project-3', tags: ['tag-13'] }],
  ['k 100, a project and a tag (1%)', 100, { namespace: 'project-3', tags: ['tag-13'] }],
  ['k 10, a project, a tag, the last half (0.5%)', 10, { namespace: 'project-3', tags: ['tag-13'], createdAfter: newest(0.5) }],
  ['k 10, metadata_filter (0.1%)', 10, { metadataFilter: { i: 7 } }],
];
// A round of every case first, so that none is timed on a cold cache.
for (const [, k, filters] of cases) for (let i = 0; i < 20; i++) await search(i, k, filters);
console.log('| semantic search | p50 ms | p95 ms | p99 ms |');
console.log('|---|---|---|---|');
for (const [name, k, filters] of cases) {
  const times: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const t = performance.now();
    await search(i, k, filters);
    times.push(performance.now() - t);
  }
  const s = summarize(times);
  console.log(`| ${name} | ${s.p50} | ${s.p95} | ${s.p99} |`);
}

// Recall@10 of the searches above against scoring every memory that passes the filters, and how much less similar
// than the exact 10th their 10th is, on average.
console.log('\n| against an exact scan | recall@10 | similarity lost at rank 10 | exact scan p50 ms |');
console.log('|---|---|---|---|');
for (const [name, k, filters] of cases.filter(([, k]) => k === 10)) {
  const compiled = await compileFilters(em(), org, filters);
  let found = 0;
  let expected = 0;
  let lost = 0;
  const times: number[] = [];
  for (let i = 0; i < RECALL_QUERIES; i++) {
    const t = performance.now();
    const exact = await query(em(), semanticCandidates(org, vectorLiteral(queries[i]!), embedder.model, k, compiled, 'exact'));
    times.push(performance.now() - t);
    const hits = await search(i, k, filters);
    const got = new Set(hits.map((h) => h.id));
    expected += exact.length;
    found += exact.filter((e) => got.has(e.id)).length;
    lost += 1 - Number(exact.at(-1)!.distance) - hits.at(-1)!.score;
  }
  console.log(`| ${name} | ${(found / expected).toFixed(3)} | ${(lost / RECALL_QUERIES).toFixed(4)} | ${summarize(times).p50} |`);
}

await orm.close();
await scratch.close(Boolean(process.env.KEEP));
